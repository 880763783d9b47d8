import Cryptography
import Support

/// PKCE (RFC 7636) with S256 only: `plain` gives no protection once the challenge leaks, and
/// HAIP requires S256.
public enum PKCE {
    /// §4.2: BASE64URL(SHA256(ASCII(code_verifier))).
    public static func challenge(verifier: String) -> String {
        Base64URL.encode(Digest.sha256(Array(verifier.utf8)))
    }

    /// §4.1: 43 to 128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~".
    public static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count) && verifier.utf8.allSatisfy(isUnreserved)
    }

    /// An S256 challenge is the base64url of 32 bytes: exactly 43 characters, no padding.
    public static func isValidS256Challenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && Base64URL.decode(challenge)?.count == 32
    }

    /// True when `verifier` is well formed and hashes to `challenge` (compared in constant time).
    public static func verify(verifier: String, challenge: String) -> Bool {
        guard isValidVerifier(verifier) else { return false }
        return ConstantTime.equal(Self.challenge(verifier: verifier), challenge)
    }

    private static func isUnreserved(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
