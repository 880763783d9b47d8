import Cryptography
import JSON
import Support

/// The registration's binding of a key attestation to its request (issue 20, item 4):
/// `client_data_hash` = base64url(SHA-256(the compact JSON object
/// `{"nonce":…,"hardware_key_tag":…,"jwk_thumbprint":…}` in exactly that member order)), with
/// `jwk_thumbprint` the RFC 7638 thumbprint of the hardware key. The object is written member
/// by member (a `JSONValue` object would sort its keys); the tag is limited to printable
/// ASCII other than `"` and `\` (`RegistrationRequest`) and nonces and thumbprints are
/// base64url, so no string needs an escape and the bytes are those any JSON library writes
/// compactly (Python: `json.dumps(obj, separators=(",", ":"))`).
public enum ClientDataHash {
    public static func clientData(nonce: String, hardwareKeyTag: String, jwkThumbprint: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 160)
        writer.openObject()
        writer.name("nonce"); writer.string(nonce)
        writer.name("hardware_key_tag"); writer.string(hardwareKeyTag)
        writer.name("jwk_thumbprint"); writer.string(jwkThumbprint)
        writer.closeObject()
        return writer.bytes
    }

    /// SHA-256 of `clientData`: what an Android `attestationChallenge` and the App Attest
    /// clientDataHash carry raw.
    public static func digest(nonce: String, hardwareKeyTag: String, jwkThumbprint: String) -> [UInt8] {
        Digest.sha256(clientData(nonce: nonce, hardwareKeyTag: hardwareKeyTag, jwkThumbprint: jwkThumbprint))
    }

    /// The base64url text a development key attestation's `client_data_hash` claim carries.
    public static func encoded(nonce: String, hardwareKeyTag: String, jwkThumbprint: String) -> String {
        Base64URL.encode(digest(nonce: nonce, hardwareKeyTag: hardwareKeyTag, jwkThumbprint: jwkThumbprint))
    }
}
