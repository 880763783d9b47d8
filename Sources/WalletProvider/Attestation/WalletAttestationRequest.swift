import JOSE
import JSON

/// A wallet attestation request JWT (issue 20, item 6), read once. `typ` is `war+jwt` at
/// `<wp>/token` and `wp-war+jwt` at `<wp>/wallet-attestations`; the other endpoint's `typ`, a
/// malformed JWT, a missing or mistyped claim are 400 `bad_request`. Nothing here is checked
/// against keys or state: `WalletProvider.issueWalletAttestation` does that in the seed's order.
public struct WalletAttestationRequest: Sendable {
    public static let tokenType = "war+jwt"
    public static let walletAttestationsType = "wp-war+jwt"
    /// Play Integrity tokens are 1 to 3 KB and App Attest assertions a few hundred bytes; the
    /// value is stored with the instance, so a larger one is refused rather than kept.
    public static let maximumIntegrityAssertion = 16 * 1024

    public let jws: JWS
    /// The new wallet key (`cnf.jwk`), which signs the request and the attestation binds.
    public let key: JWK
    public let keyThumbprint: String
    public let issuer: String
    public let audience: [String]
    public let issuedAt: Int64
    public let expiresAt: Int64
    /// `challenge` or `nonce`, whichever the request used, and its value.
    public let nonceMember: String
    public let nonce: String
    public let hardwareKeyTag: String
    public let hardwareSignature: String
    public let integrityAssertion: String?
    public let keyAttestation: String?

    public static func parse(_ compact: String, expectedType: String) throws(WalletProviderError) -> WalletAttestationRequest {
        let jws: JWS
        let claims: [String: JSONValue]
        do throws(JOSEError) {
            (jws, claims) = try JWS.parseClaims(compact)
        } catch {
            throw .badRequest("assertion is not a readable JWT: \(error)")
        }
        guard jws.type == expectedType else {
            throw .badRequest("the assertion's typ must be \(expectedType), not \(jws.type ?? "absent")")
        }
        func string(_ name: String) throws(WalletProviderError) -> String {
            guard let value = claims[name] else { throw .badRequest("the assertion has no \(name)") }
            guard let text = value.stringValue, !text.isEmpty else { throw .badRequest("\(name) must be a non-empty string") }
            return text
        }
        func optionalString(_ name: String) throws(WalletProviderError) -> String? {
            guard claims[name] != nil else { return nil }
            return try string(name)
        }
        func int(_ name: String) throws(WalletProviderError) -> Int64 {
            guard let value = claims[name] else { throw .badRequest("the assertion has no \(name)") }
            guard let number = value.intValue else { throw .badRequest("\(name) must be a number") }
            return number
        }
        guard let jwkObject = claims["cnf"]?.objectValue?["jwk"]?.objectValue else { throw .badRequest("the assertion has no cnf.jwk") }
        let key: JWK
        do throws(JOSEError) {
            key = try JWK(json: jwkObject)
            guard key.kty == "EC", key.json["crv"]?.stringValue == "P-256" else { throw .invalidKey("must be an EC P-256 key") }
            _ = try key.publicKey()
        } catch {
            throw .badRequest("cnf.jwk: \(error)")
        }
        let audience = try DeviceRequestClaims(claims: claims).audience()
        let nonceMember = claims["challenge"] != nil ? "challenge" : "nonce"
        let nonce = try string(nonceMember)
        let tag = try string("hardware_key_tag")
        let integrityAssertion = try optionalString("integrity_assertion")
        if let integrityAssertion, integrityAssertion.utf8.count > maximumIntegrityAssertion {
            throw .badRequest("integrity_assertion is longer than \(maximumIntegrityAssertion) bytes")
        }
        let keyAttestation = try optionalString("key_attestation")
        guard integrityAssertion != nil || keyAttestation != nil else {
            throw .badRequest("the assertion needs integrity_assertion or key_attestation")
        }
        return WalletAttestationRequest(
            jws: jws, key: key.keyMembersOnly, keyThumbprint: key.thumbprint(), issuer: try string("iss"), audience: audience,
            issuedAt: try int("iat"), expiresAt: try int("exp"), nonceMember: nonceMember, nonce: nonce, hardwareKeyTag: tag,
            hardwareSignature: try string("hardware_signature"), integrityAssertion: integrityAssertion, keyAttestation: keyAttestation)
    }
}
