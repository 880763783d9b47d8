import Cryptography
import JOSE
import JSON
import Support

/// A DPoP proof (RFC 9449 §4) that passed every check: the key it proves possession of.
public struct DPoPProof: Sendable, Equatable {
    public let jwk: JWK
    /// RFC 7638 thumbprint of `jwk`: the `jkt` a token bound to this key carries.
    public let thumbprint: String

    public init(jwk: JWK, thumbprint: String) {
        self.jwk = jwk
        self.thumbprint = thumbprint
    }
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

/// Checks DPoP proofs (RFC 9449 §4.3) for one authorization server and its protected
/// resources: the proof window, the algorithms the metadata advertises, the server's nonces
/// and its `jti` replay records. A value built from configuration; every service's endpoints
/// share the same code.
public struct DPoPVerifier: Sendable {
    /// Seconds a proof's `iat` may lie from now (either way); the `jti` record outlives it.
    public let proofWindow: Int64
    public let clock: any Clock
    public let nonces: DPoPNonces
    /// Seen `jti`s (purpose `dpop`).
    public let replays: ReplayRecords
    /// `dpop_signing_alg_values_supported`.
    public static let algorithms: Set<SignatureAlgorithm> = [.ES256]

    public init(issuer: String, proofWindow: Int64, clock: any Clock, nonces: DPoPNonces, replayStore: any ReplayStore) {
        self.proofWindow = proofWindow
        self.clock = clock
        self.nonces = nonces
        replays = ReplayRecords(issuer: issuer, purpose: "dpop", store: replayStore)
    }

    /// Checks a DPoP proof (RFC 9449 §4.3) sent with `method` to `url` (the endpoint's public
    /// URL, never one built from the request). `accessToken` is set at a protected resource: the proof's
    /// `ath` must then be its hash (§4.2). `resource` renders errors for a protected resource.
    ///
    /// Checks, in order: one proof; `typ` exactly `dpop+jwt`; `alg` ES256 (the only algorithm
    /// the metadata advertises); a public `jwk` header (private members are refused by `JWK`);
    /// signature; `jti`, `htm`, `htu` (query and fragment ignored, §4.3 item 9), `iat` within
    /// `proofWindow`; `ath`; the nonce; and last the `jti` replay record, so a
    /// proof refused for another reason does not burn its `jti`.
    public func verify(_ proof: String?, method: String, url: String, accessToken: String? = nil,
                       nonce policy: DPoPNoncePolicy, resource: Bool = false) throws(OAuthError) -> DPoPProof {
        let scheme = resource ? "DPoP" : nil
        func refuse(_ why: String) -> OAuthError { OAuthError(.invalidDPoPProof, why, authenticationScheme: scheme) }
        guard let proof, !proof.isEmpty else { throw refuse("missing DPoP proof") }
        // Repeated header fields arrive joined by ", "; a compact JWS never holds a comma (§4.3 item 1).
        // Searched on the UTF-8 bytes: `contains(",")` would be Foundation's substring search.
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
            key = try jws.verifyWithEmbeddedKey(allowList: Self.algorithms, expectedType: "dpop+jwt")
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
        guard abs(now - iat) <= proofWindow else { throw refuse("iat is outside the accepted window") }
        if let accessToken {
            let expected = Base64URL.encode(Digest.sha256(Array(accessToken.utf8)))
            guard claims["ath"]?.stringValue == expected else { throw refuse("ath does not match the access token") }
        }
        if let nonceValue = claims["nonce"] {
            guard let nonce = nonceValue.stringValue, nonces.isValid(nonce, now: now) else {
                throw OAuthError(.useDPoPNonce, "the DPoP nonce is not valid (any more)", dpopNonce: nonces.current(),
                                    authenticationScheme: scheme)
            }
        } else if policy == .required {
            throw OAuthError(.useDPoPNonce, "a DPoP nonce is required", dpopNonce: nonces.current(), authenticationScheme: scheme)
        }
        // A replay inside the window is refused; the record outlives the window on both sides.
        let recorded = try replays.firstUse(jti, expiresAt: max(now, iat) + proofWindow + 1)
        guard recorded else { throw refuse("DPoP proof replayed (jti already used)") }
        return DPoPProof(jwk: key, thumbprint: key.thumbprint())
    }

    /// `htu` names the same target as `url` (RFC 9449 §4.3 item 9): query and fragment ignored,
    /// scheme and host compared case-insensitively (RFC 3986 §6.2.2.1).
    public static func sameTarget(_ htu: String, _ url: String) -> Bool {
        normalizedTarget(htu) == normalizedTarget(url)
    }

    /// The URI's bytes up to its query or fragment, scheme and authority in ASCII lower case
    /// (a URI's scheme and host are ASCII: RFC 3986 §3.1, §3.2.2). Worked on the UTF-8 bytes,
    /// as two URIs are normalized per DPoP request: a Character search and Foundation's
    /// `range(of:)` showed in the issuance profile.
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
}
