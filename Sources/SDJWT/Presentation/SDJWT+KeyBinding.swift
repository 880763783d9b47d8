import Cryptography
import JOSE
import JSON

extension SDJWT {
    public static let keyBindingType = "kb+jwt"

    /// Appends a Key Binding JWT (RFC 9901 §4.3) signed by the holder key that the issuer put in
    /// `cnf.jwk`. `sd_hash` covers this presentation up to and including its last `~`, so the
    /// verifier knows exactly which disclosures the holder chose to send.
    public func addingKeyBinding(key: PrivateKey, algorithm: SignatureAlgorithm, audience: String, nonce: String,
                                 issuedAt: Int64, digestAlgorithm: DigestAlgorithm = .sha256) throws(SDJWTError) -> SDJWT {
        let claims: [String: JSONValue] = [
            "aud": .string(audience),
            "nonce": .string(nonce),
            "iat": .int(issuedAt),
            "sd_hash": .string(digestAlgorithm.digest(of: withoutKeyBinding)),
        ]
        let jwt: String
        do {
            jwt = try JWS.sign(header: ["typ": .string(Self.keyBindingType)], payloadBytes: JSONValue.object(claims).bytes,
                               key: key, algorithm: algorithm)
        } catch { throw .jose(error) }
        return SDJWT(issuerJWT: issuerJWT, disclosures: disclosures, keyBindingJWT: jwt)
    }

    /// RFC 9901 §7.3 steps 5: the KB-JWT must be present, signed by `cnf.jwk` of the processed
    /// payload with an allowed algorithm, typed `kb+jwt`, fresh, for this audience and nonce,
    /// and bound by `sd_hash` to exactly these disclosures.
    func verifyKeyBinding(claims: [String: JSONValue], algorithm: DigestAlgorithm, expectation: KeyBindingExpectation,
                          policy: SDJWTVerificationPolicy) throws(SDJWTError) -> [String: JSONValue] {
        guard let keyBindingJWT else { throw .keyBinding("KB-JWT required but absent") }
        guard let jwkObject = claims["cnf"]?["jwk"]?.objectValue else { throw .keyBinding("no cnf.jwk in the credential") }
        let (jws, kbClaims): (JWS, [String: JSONValue])
        do { (jws, kbClaims) = try JWS.parseClaims(keyBindingJWT) } catch { throw .jose(error) }
        do {
            var holderKey = try JWK(json: jwkObject)
            // The cnf key is the only candidate: a kid in the KB-JWT header need not be in cnf.
            if holderKey.kid == nil, let kid = jws.keyID { holderKey = holderKey.adding(["kid": .string(kid)]) }
            try jws.verify(keys: JWKSet(keys: [holderKey]), allowList: policy.allowList, expectedType: Self.keyBindingType,
                           requireKeyID: false)
        } catch { throw .jose(error) }

        guard let iat = kbClaims["iat"]?.intValue else { throw .keyBinding("iat missing") }
        guard iat <= policy.now + policy.clockSkew else { throw .keyBinding("iat in the future") }
        guard iat >= policy.now - expectation.maximumAge - policy.clockSkew else { throw .keyBinding("iat too old") }
        let audienceMatches: Bool
        switch kbClaims["aud"] {
        case .string(let aud)?: audienceMatches = aud == expectation.audience
        case .array(let auds)?: audienceMatches = auds.contains(.string(expectation.audience))
        default: audienceMatches = false
        }
        guard audienceMatches else { throw .keyBinding("aud does not match") }
        guard kbClaims["nonce"]?.stringValue == expectation.nonce else { throw .keyBinding("nonce does not match") }
        guard kbClaims["sd_hash"]?.stringValue == algorithm.digest(of: withoutKeyBinding) else {
            throw .keyBinding("sd_hash does not match the presented disclosures")
        }
        return kbClaims
    }
}
