import Cryptography
import JOSE
import JSON
import Store
import Support

/// A DPoP proof (RFC 9449 §4) that passed every check: the key it proves possession of.
public struct DPoPProof: Sendable, Equatable {
    public let jwk: JWK
    /// RFC 7638 thumbprint of `jwk`: the `jkt` a token bound to this key carries.
    public let thumbprint: String
}

/// Where a proof is checked decides which nonce rule applies and how errors are rendered: the
/// authorization server answers 400 with a `DPoP-Nonce` (RFC 9449 §8), a protected resource
/// 401 with `WWW-Authenticate: DPoP` (§7.1, §9).
public enum DPoPNoncePolicy: Sendable {
    /// The proof must carry a nonce this server issued (the token endpoint).
    case required
    /// A nonce is optional; one that is present must be valid (PAR, the credential endpoints).
    case optional
}

extension PIDProvider {
    /// Checks a DPoP proof (RFC 9449 §4.3) sent with `method` to `url` (one of `urls`, never a
    /// URL built from the request). `accessToken` is set at a protected resource: the proof's
    /// `ath` must then be its hash (§4.2). `resource` renders errors for a protected resource.
    ///
    /// Checks, in order: one proof; `typ` exactly `dpop+jwt`; `alg` ES256 (the only algorithm
    /// the metadata advertises); a public `jwk` header (private members are refused by `JWK`);
    /// signature; `jti`, `htm`, `htu` (query and fragment ignored, §4.3 item 9), `iat` within
    /// `configuration.proofWindow`; `ath`; the nonce; and last the `jti` replay record, so a
    /// proof refused for another reason does not burn its `jti`.
    public func verifyDPoPProof(_ proof: String?, method: String, url: String, accessToken: String? = nil,
                                nonce policy: DPoPNoncePolicy, resource: Bool = false) throws(IssuanceError) -> DPoPProof {
        let scheme = resource ? "DPoP" : nil
        func refuse(_ why: String) -> IssuanceError { IssuanceError(.invalidDPoPProof, why, authenticationScheme: scheme) }
        guard let proof, !proof.isEmpty else { throw refuse("missing DPoP proof") }
        // Repeated header fields arrive joined by ", "; a compact JWS never holds a comma (§4.3 item 1).
        // On the UTF-8 bytes: `contains(",")` is Foundation's substring search, 388,000
        // instructions per DPoP flow (callgrind, issuance-callgrind.sh).
        guard !proof.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: " ") }) else {
            throw refuse("exactly one DPoP proof is allowed")
        }
        let jws: JWS
        let claims: [String: JSONValue]
        do throws(JOSEError) {
            (jws, claims) = try JWS.parseClaims(proof)
        } catch {
            throw refuse("\(error)")
        }
        guard jws.header["typ"]?.stringValue == "dpop+jwt" else { throw refuse("typ must be dpop+jwt") }
        let key: JWK
        do throws(JOSEError) {
            key = try jws.verifyWithEmbeddedKey(allowList: [.ES256], expectedType: "dpop+jwt")
        } catch {
            throw refuse("\(error)")
        }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256 else {
            throw refuse("jti must be a non-empty string")
        }
        guard claims["htm"]?.stringValue == method else { throw refuse("htm must be \(method)") }
        guard let htu = claims["htu"]?.stringValue, Self.sameTarget(htu, url) else { throw refuse("htu must be \(url)") }
        guard let iat = claims["iat"]?.intValue else { throw refuse("iat must be a number") }
        let now = clock.now()
        guard abs(now - iat) <= configuration.proofWindow else { throw refuse("iat is outside the accepted window") }
        if let accessToken {
            let expected = Base64URL.encode(Digest.sha256(Array(accessToken.utf8)))
            guard claims["ath"]?.stringValue == expected else { throw refuse("ath does not match the access token") }
        }
        if let nonceValue = claims["nonce"] {
            guard let nonce = nonceValue.stringValue, isValidDPoPNonce(nonce, now: now) else {
                throw IssuanceError(.useDPoPNonce, "the DPoP nonce is not valid (any more)", dpopNonce: dpopNonce(),
                                    authenticationScheme: scheme)
            }
        } else if policy == .required {
            throw IssuanceError(.useDPoPNonce, "a DPoP nonce is required", dpopNonce: dpopNonce(), authenticationScheme: scheme)
        }
        // A replay inside the window is refused; the record outlives the window on both sides.
        let recorded = try withOAuthStore { () throws(StoreError) in
            try NonceRepository(database: database).recordJTI(
                issuer: issuer, purpose: "dpop", jti: jti, expiresAt: max(now, iat) + configuration.proofWindow + 1)
        }
        guard recorded else { throw refuse("DPoP proof replayed (jti already used)") }
        return DPoPProof(jwk: key, thumbprint: key.thumbprint())
    }

    // MARK: Nonces

    /// A fresh `DPoP-Nonce` (RFC 9449 §8, §9). Stateless: 8 bytes of issue time and a 16-byte
    /// HMAC-SHA256 over it under a key derived from the issuer's recovery secret (HKDF with its
    /// own label, so the two uses never share a key). Nothing is written per nonce, any number
    /// of proofs may reuse one while it lives (`configuration.nonceLifetime`), and restarts
    /// keep issued nonces valid. Replays are caught by the `jti` record, not by the nonce.
    ///
    /// A nonce depends on its second alone, so the current second's is made once and kept
    /// (`dpopNonceMemo`): the HMAC and encoding cost 10,000 instructions per nonce request and
    /// per DPoP token response (callgrind, issuance-callgrind.sh).
    public func dpopNonce() -> String {
        let time = clock.now()
        if let memo = dpopNonceMemo.read({ $0 }), memo.time == time { return memo.nonce }
        let timeBytes = (0..<8).map { UInt8(truncatingIfNeeded: time >> (56 - 8 * $0)) }
        let nonce = Base64URL.encode(timeBytes + dpopNonceMAC(timeBytes))
        dpopNonceMemo.withLock { $0 = (time, nonce) }
        return nonce
    }

    /// True for a nonce this issuer made, neither older than `nonceLifetime` nor from the future.
    /// The nonce of the memo's second is known without its MAC (it is public: every client of
    /// that second got it).
    func isValidDPoPNonce(_ nonce: String, now: Int64) -> Bool {
        if let memo = dpopNonceMemo.read({ $0 }), memo.nonce == nonce {
            return memo.time <= now + 5 && now - memo.time < configuration.nonceLifetime
        }
        guard let bytes = Base64URL.decode(nonce), bytes.count == 24 else { return false }
        let timeBytes = Array(bytes[0..<8])
        let time = timeBytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
        guard time <= now + 5, now - time < configuration.nonceLifetime else { return false }
        let expected = dpopNonceMAC(timeBytes)
        var difference: UInt8 = 0
        for (a, b) in zip(expected, bytes[8...]) { difference |= a ^ b }
        return difference == 0
    }

    private func dpopNonceMAC(_ timeBytes: [UInt8]) -> [UInt8] {
        Array(dpopNonceKey.mac(timeBytes).prefix(16))
    }

    /// HKDF of the recovery secret with the issuer as salt and a label per use (DPoP nonces,
    /// c_nonces), so no two uses share a key. The derivation cannot fail for a non-empty
    /// secret; an empty one (never generated so) falls back to the issuer string as key
    /// material, which still separates issuers.
    static func nonceKey(issuer: String, recoverySecret: [UInt8], label: String) -> [UInt8] {
        let secret = recoverySecret.isEmpty ? Array(issuer.utf8) : recoverySecret
        return (try? KeyDerivation.hkdf(inputKeyMaterial: secret, salt: Array(issuer.utf8),
                                        info: Array(label.utf8), outputLength: 32)) ?? secret
    }

    /// `htu` names the same target as `url` (RFC 9449 §4.3 item 9): query and fragment ignored,
    /// scheme and host compared case-insensitively (RFC 3986 §6.2.2.1).
    static func sameTarget(_ htu: String, _ url: String) -> Bool {
        normalizedTarget(htu) == normalizedTarget(url)
    }

    /// The URI's bytes up to its query or fragment, scheme and authority in ASCII lower case
    /// (a URI's scheme and host are ASCII: RFC 3986 §3.1, §3.2.2). On the UTF-8 bytes: the
    /// Character search and Foundation's `range(of: "://")` cost 154,000 instructions per
    /// DPoP flow (callgrind, issuance-callgrind.sh: two DPoP proofs, each URI normalized).
    static func normalizedTarget(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        if let cut = bytes.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            bytes.removeSubrange(cut...)
        }
        let separator: [UInt8] = Array("://".utf8)
        guard bytes.count >= separator.count,
              let schemeEnd = (0...(bytes.count - separator.count)).first(where: { bytes[$0..<($0 + separator.count)].elementsEqual(separator) })
        else { return bytes }
        let authorityStart = schemeEnd + separator.count
        let authorityEnd = bytes[authorityStart...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
        for i in 0..<authorityEnd where (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[i]) { bytes[i] |= 0x20 }
        return bytes
    }

    /// Runs a store call; a storage failure is ours (500), logged without the SQL detail.
    func withOAuthStore<T>(_ body: () throws(StoreError) -> T) throws(IssuanceError) -> T {
        do throws(StoreError) {
            return try body()
        } catch {
            logger.error("OAuth store failure: \(error)")
            throw .serverError("the authorization store failed")
        }
    }

    /// Runs the body of an OAuth endpoint: a refused parameter is 400 `invalid_request`
    /// (RFC 6749 §5.2), an `IssuanceError` stays as it is, anything else is ours (500).
    func oauthRequest<T>(_ body: () throws -> T) throws(IssuanceError) -> T {
        do {
            return try body()
        } catch let error as ParameterError {
            throw .invalidRequest(error.description)
        } catch let error as IssuanceError {
            throw error
        } catch {
            throw .serverError("\(error)")
        }
    }
}
