import Cryptography
import JOSE
import JSON

/// What a verifier accepts. `now` comes from the caller's clock so tests can move time.
public struct SDJWTVerificationPolicy: Sendable {
    public var now: Int64
    public var allowList: Set<SignatureAlgorithm>
    /// `dc+sd-jwt` for SD-JWT VC; nil skips the check (plain RFC 9901 SD-JWTs).
    public var expectedType: String?
    public var requireKeyID: Bool
    public var clockSkew: Int64
    /// When set, a KB-JWT is required and checked (RFC 9901 §7.3); when nil, any KB-JWT is ignored.
    public var keyBinding: KeyBindingExpectation?

    public init(now: Int64, allowList: Set<SignatureAlgorithm> = AlgorithmPolicy.federationDefault,
                expectedType: String? = SDJWTIssuer.mediaType, requireKeyID: Bool = false, clockSkew: Int64 = 60,
                keyBinding: KeyBindingExpectation? = nil) {
        self.now = now
        self.allowList = allowList
        self.expectedType = expectedType
        self.requireKeyID = requireKeyID
        self.clockSkew = clockSkew
        self.keyBinding = keyBinding
    }
}

/// The verifier's expectations for the KB-JWT: its audience and the nonce it handed out.
public struct KeyBindingExpectation: Sendable {
    public var audience: String
    public var nonce: String
    /// How old `iat` may be, in seconds.
    public var maximumAge: Int64

    public init(audience: String, nonce: String, maximumAge: Int64 = 300) {
        self.audience = audience
        self.nonce = nonce
        self.maximumAge = maximumAge
    }
}

/// The result of a successful verification: the processed payload with the disclosed claims in
/// place and no `_sd`, `...` or `_sd_alg` left.
public struct VerifiedSDJWT: Sendable {
    public let header: [String: JSONValue]
    public let claims: [String: JSONValue]
    public let disclosed: [DisclosedClaim]
    /// The KB-JWT's claims, when key binding was checked.
    public let keyBindingClaims: [String: JSONValue]?
    /// The payload's `_sd_alg` (what `sd_hash` is computed with).
    public let digestAlgorithm: DigestAlgorithm
}

extension SDJWT {
    /// RFC 9901 §7.1 (and §7.3 when the policy asks for key binding): verifies the issuer
    /// signature against `issuerKeys`, checks `exp`/`nbf`, and rebuilds the payload.
    public func verify(issuerKeys: JWKSet, policy: SDJWTVerificationPolicy) throws(SDJWTError) -> VerifiedSDJWT {
        let jws = try parsedIssuerJWT()
        do {
            try jws.verify(keys: issuerKeys, allowList: policy.allowList, expectedType: policy.expectedType,
                           requireKeyID: policy.requireKeyID)
        } catch { throw .jose(error) }
        let payload: [String: JSONValue]
        do { payload = try jws.payload() } catch { throw .jose(error) }
        try Self.checkValidity(payload, now: policy.now, skew: policy.clockSkew)

        let algorithm = try Self.digestAlgorithm(of: payload)
        var processor = try PayloadProcessor(disclosures: disclosures, algorithm: algorithm)
        let claims = try processor.processPayload(payload)

        var keyBindingClaims: [String: JSONValue]?
        if let expectation = policy.keyBinding {
            keyBindingClaims = try verifyKeyBinding(claims: claims, algorithm: algorithm, expectation: expectation, policy: policy)
        }
        return VerifiedSDJWT(header: jws.header, claims: claims, disclosed: processor.disclosed, keyBindingClaims: keyBindingClaims,
                             digestAlgorithm: algorithm)
    }

    /// RFC 9901 §7.3 on its own, after `verify` without key binding: for a verifier that reports
    /// the issuer's signature and the holder's key binding as separate checks without verifying
    /// the issuer's signature twice. Returns the KB-JWT's claims.
    public func verifyKeyBinding(of verified: VerifiedSDJWT, expectation: KeyBindingExpectation,
                                 policy: SDJWTVerificationPolicy) throws(SDJWTError) -> [String: JSONValue] {
        try verifyKeyBinding(claims: verified.claims, algorithm: verified.digestAlgorithm, expectation: expectation, policy: policy)
    }

    /// The disclosures and where each lands, read from the payload without verifying the
    /// signature: what a holder needs to choose what to present.
    public func disclosedClaims() throws(SDJWTError) -> [DisclosedClaim] {
        let payload: [String: JSONValue]
        let jws = try parsedIssuerJWT()
        do { payload = try jws.payload() } catch { throw .jose(error) }
        var processor = try PayloadProcessor(disclosures: disclosures, algorithm: try Self.digestAlgorithm(of: payload))
        _ = try processor.processPayload(payload)
        return processor.disclosed
    }

    static func digestAlgorithm(of payload: [String: JSONValue]) throws(SDJWTError) -> DigestAlgorithm {
        guard let value = payload["_sd_alg"] else { return .sha256 }
        guard let name = value.stringValue else { throw .malformed("_sd_alg must be a string") }
        guard let algorithm = DigestAlgorithm(rawValue: name) else { throw .unsupportedDigestAlgorithm(name) }
        return algorithm
    }

    private static func checkValidity(_ payload: [String: JSONValue], now: Int64, skew: Int64) throws(SDJWTError) {
        if let exp = payload["exp"] {
            guard let value = exp.intValue else { throw .malformed("exp must be a number") }
            guard now - skew < value else { throw .malformed("expired (exp \(value))") }
        }
        if let nbf = payload["nbf"] {
            guard let value = nbf.intValue else { throw .malformed("nbf must be a number") }
            guard value <= now + skew else { throw .malformed("not yet valid (nbf \(value))") }
        }
    }
}
