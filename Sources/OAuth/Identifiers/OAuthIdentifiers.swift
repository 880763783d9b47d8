import Cryptography
import Support

/// The unguessable values an authorization server hands out (codes, tokens, request URIs,
/// nonces, ids), with random bytes from OpenSSL.
public enum OAuthIdentifiers {
    /// A fresh unguessable value in creation order (see `OrderedIdentifier` for why: rows
    /// keyed by it land on the last leaves of their index): the time prefix, then `bytes`
    /// random bytes (at least 16) in base64url.
    public static func ordered(bytes: Int = 32, milliseconds: UInt64 = OrderedIdentifier.wallClockMilliseconds()) -> String {
        OrderedIdentifier.make(random: SecureRandom.bytes(max(bytes, 16)), milliseconds: milliseconds)
    }

    /// A fresh unguessable value with no order: `bytes` random bytes, base64url.
    public static func random(bytes: Int = 32) -> String { Base64URL.encode(SecureRandom.bytes(bytes)) }

    public static var orderedPrefixLength: Int { OrderedIdentifier.prefixLength }

    public static func hasOrderedPrefix(_ text: some StringProtocol, length: Int) -> Bool {
        OrderedIdentifier.hasPrefix(text, length: length)
    }
}
