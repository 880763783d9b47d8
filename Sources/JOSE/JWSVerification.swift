import Cryptography
import JSON

extension JWS {
    /// Header parameters through which a token would name its own key; trust must come from the
    /// caller's keys instead.
    static let keySupplyingHeaders = ["jwk", "jku", "x5u"]

    /// Verifies against caller-supplied trusted keys. Checks, in order: alg present and allowed
    /// (never none/HS*); forbidden headers (jwk, jku, x5u, b64, crit members not understood);
    /// typ (when `expectedType` is set); kid (present when required, then found in `keys`; with no
    /// kid every key is tried); key fits alg; signature. Returns the key that verified.
    @discardableResult
    public func verify(
        keys: JWKSet, allowList: Set<SignatureAlgorithm>, expectedType: String?,
        requireKeyID: Bool = true, understoodCritical: Set<String> = []
    ) throws(JOSEError) -> JWK {
        let algorithm = try checkedAlgorithm(allowList)
        try checkHeaderParameters(forbidding: Self.keySupplyingHeaders, understoodCritical: understoodCritical)
        try checkType(expectedType)

        let candidates: [JWK]
        if let kidValue = header["kid"] {
            guard let kid = kidValue.stringValue else { throw .malformed("kid must be a string") }
            candidates = keys.keys.filter { $0.kid == kid }
            guard !candidates.isEmpty else { throw .unknownKeyID(kid) }
        } else {
            guard !requireKeyID else { throw .missingKeyID }
            candidates = keys.keys
        }
        return try verifySignature(with: candidates, algorithm: algorithm).jwk
    }

    /// Verifies a proof-of-possession JWT (OpenID4VCI proof, DPoP) whose key travels in its own
    /// `jwk` header. This proves only that the sender holds that key; the caller decides whether
    /// the key means anything. jku and x5u stay forbidden.
    @discardableResult
    public func verifyWithEmbeddedKey(
        allowList: Set<SignatureAlgorithm>, expectedType: String?, understoodCritical: Set<String> = []
    ) throws(JOSEError) -> JWK {
        try verifyWithEmbeddedPublicKey(allowList: allowList, expectedType: expectedType, understoodCritical: understoodCritical).jwk
    }

    /// `verifyWithEmbeddedKey` with the OpenSSL key it verified with, checked on its curve, for
    /// a caller that uses the key again (the PID Provider binds an mdoc to it), so the JWK is
    /// imported into OpenSSL once per request.
    public func verifyWithEmbeddedPublicKey(
        allowList: Set<SignatureAlgorithm>, expectedType: String?, understoodCritical: Set<String> = []
    ) throws(JOSEError) -> (jwk: JWK, publicKey: PublicKey) {
        let algorithm = try checkedAlgorithm(allowList)
        try checkHeaderParameters(forbidding: ["jku", "x5u"], understoodCritical: understoodCritical)
        try checkType(expectedType)
        guard let object = header["jwk"]?.objectValue else { throw .malformed("missing jwk header") }
        let key = try JWK(json: object)
        return try verifySignature(with: [key], algorithm: algorithm)
    }

    private func checkedAlgorithm(_ allowList: Set<SignatureAlgorithm>) throws(JOSEError) -> SignatureAlgorithm {
        guard let value = header["alg"] else { throw .malformed("missing alg header") }
        guard let name = value.stringValue else { throw .malformed("alg must be a string") }
        guard let algorithm = SignatureAlgorithm(rawValue: name), allowList.contains(algorithm) else {
            throw .unsupportedAlgorithm(name)
        }
        return algorithm
    }

    private func checkHeaderParameters(forbidding forbidden: [String], understoodCritical: Set<String>) throws(JOSEError) {
        for name in forbidden where header[name] != nil { throw .forbiddenHeader(name) }
        // RFC 7797 unencoded payloads change what is signed; this library never produces or
        // accepts them.
        if let b64 = header["b64"], b64 != .bool(true) { throw .forbiddenHeader("b64") }
        if let crit = header["crit"] {
            guard let names = crit.stringArray, !names.isEmpty else {
                throw .malformed("crit must be a non-empty array of strings")
            }
            for name in names {
                guard understoodCritical.contains(name) else { throw .forbiddenHeader("crit \"\(name)\"") }
                guard header[name] != nil else { throw .malformed("crit lists absent header \"\(name)\"") }
            }
        }
    }

    private func checkType(_ expected: String?) throws(JOSEError) {
        if let typ = header["typ"], typ.stringValue == nil { throw .malformed("typ must be a string") }
        guard let expected else { return }
        guard let actual = type, MediaType.matches(actual, expected) else {
            throw .typeMismatch(expected: expected, actual: type)
        }
    }

    /// The first candidate that fits and verifies wins. When none does, the error names the most
    /// specific reason: a fitting key that rejected the signature, else an unusable key, else a
    /// key/algorithm mismatch.
    private func verifySignature(with candidates: [JWK], algorithm: SignatureAlgorithm) throws(JOSEError)
        -> (jwk: JWK, publicKey: PublicKey) {
        var triedFittingKey = false
        var keyError: JOSEError?
        for jwk in candidates where jwk.permits(algorithm) {
            let publicKey: PublicKey
            do { publicKey = try jwk.publicKey() } catch { keyError = error; continue }
            guard publicKey.fits(algorithm) else { continue }
            triedFittingKey = true
            if publicKey.verify(signature: signature, data: signingInput, algorithm: algorithm) { return (jwk, publicKey) }
        }
        if triedFittingKey { throw .invalidSignature }
        throw keyError ?? .keyAlgorithmMismatch
    }
}

extension JWK {
    /// The JWK's own restrictions (RFC 7517 §4.2–4.4): its alg, use and key_ops must allow
    /// verifying with `algorithm`.
    func permits(_ algorithm: SignatureAlgorithm) -> Bool {
        if let alg = json["alg"], alg.stringValue != algorithm.rawValue { return false }
        if let use = json["use"], use.stringValue != "sig" { return false }
        if let ops = json["key_ops"], !(ops.stringArray ?? []).contains("verify") { return false }
        return true
    }
}
