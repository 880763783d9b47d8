import Cryptography
import Support

/// The PID Provider's stored identifiers are `OrderedIdentifier`s (see there for why) with
/// random bytes from OpenSSL.
extension PIDProvider {
    /// A fresh unguessable value in creation order: the time prefix, then `bytes` random bytes
    /// (at least 16) in base64url.
    static func orderedToken(bytes: Int = 32, milliseconds: UInt64 = OrderedIdentifier.wallClockMilliseconds()) -> String {
        OrderedIdentifier.make(random: SecureRandom.bytes(max(bytes, 16)), milliseconds: milliseconds)
    }

    static var orderedPrefixLength: Int { OrderedIdentifier.prefixLength }

    static func hasOrderedPrefix(_ text: some StringProtocol, length: Int) -> Bool {
        OrderedIdentifier.hasPrefix(text, length: length)
    }
}
