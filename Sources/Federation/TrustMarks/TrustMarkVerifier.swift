import JOSE
import JSON

/// Why a trust mark was not accepted; only logged, since an invalid mark is dropped, not an error.
enum TrustMarkRejection: Error, CustomStringConvertible {
    case malformed(String)
    case wrongSubject(String)
    case notYetValid
    case expired
    case untrustedIssuer(String)
    case badSignature(String)
    case badDelegation(String)

    var description: String {
        switch self {
        case .malformed(let m): return "malformed: \(m)"
        case .wrongSubject(let s): return "issued to \(s)"
        case .notYetValid: return "issued in the future"
        case .expired: return "expired"
        case .untrustedIssuer(let m): return "issuer not trusted: \(m)"
        case .badSignature(let m): return "signature does not verify: \(m)"
        case .badDelegation(let m): return "delegation invalid: \(m)"
        }
    }
}

/// Validates trust marks found in a subject's entity configuration against the Trust Anchor a
/// chain was resolved to (sections 7.3 and 7.2.2).
struct TrustMarkVerifier {
    let trustAnchor: EntityStatement
    let now: Int64
    let skew: Int64

    /// Returns the mark's effective expiry (the earlier of the mark's and its delegation's `exp`,
    /// nil when neither expires). `issuerKeys` is only asked once every cheaper check has passed,
    /// because it resolves a whole trust chain for the issuer.
    func verify(_ entry: TrustMarkEntry, subject: String,
                issuerKeys: (String) throws(FederationError) -> JWKSet) throws(TrustMarkRejection) -> Int64? {
        let (jws, claims) = try decode(entry.trustMark, type: FederationType.trustMark)
        guard let iss = claims["iss"]?.stringValue, !iss.isEmpty else { throw .malformed("iss missing") }
        guard let sub = claims["sub"]?.stringValue else { throw .malformed("sub missing") }
        guard let type = claims["trust_mark_type"]?.stringValue else { throw .malformed("trust_mark_type missing") }
        guard type == entry.trustMarkType else { throw .malformed("trust_mark_type \(type) differs from the entry's \(entry.trustMarkType)") }
        guard sub == subject else { throw .wrongSubject(sub) }
        var expiresAt = try checkTime(claims)

        try checkIssuerAllowed(iss, type: type)
        let owner = try trustMarkOwner(of: type)
        var delegationExpiry: Int64?
        if let delegation = claims["delegation"] {
            guard let owner else { throw .badDelegation("the trust anchor names no owner for \(type)") }
            guard let compact = delegation.stringValue else { throw .badDelegation("not a string") }
            delegationExpiry = try verifyDelegation(compact, owner: owner, issuer: iss, type: type)
        } else if owner != nil {
            throw .badDelegation("the trust anchor names an owner for \(type), so a delegation is required")
        }

        let keys: JWKSet
        do { keys = try issuerKeys(iss) } catch { throw .untrustedIssuer("no trust chain for \(iss): \(error.message)") }
        do {
            try jws.verify(keys: keys, allowList: AlgorithmPolicy.federationDefault, expectedType: FederationType.trustMark)
        } catch {
            throw .badSignature("\(error)")
        }
        if let d = delegationExpiry { expiresAt = min(expiresAt ?? d, d) }
        return expiresAt
    }

    private func decode(_ compact: String, type: String) throws(TrustMarkRejection) -> (jws: JWS, claims: [String: JSONValue]) {
        let jws: JWS
        let claims: [String: JSONValue]
        do { (jws, claims) = try JWS.parseClaims(compact) } catch { throw .malformed("\(error)") }
        guard FederationType.matches(jws.type, type) else { throw .malformed("typ is not \(type)") }
        return (jws, claims)
    }

    /// `iat` not in the future and `exp` (optional: a mark without one does not expire) not past.
    private func checkTime(_ claims: [String: JSONValue]) throws(TrustMarkRejection) -> Int64? {
        guard let iat = claims["iat"]?.intValue else { throw .malformed("iat missing or not a number") }
        if iat > now + skew { throw .notYetValid }
        guard let e = claims["exp"] else { return nil }
        guard let exp = e.intValue else { throw .malformed("exp not a number") }
        if exp <= now { throw .expired }
        return exp
    }

    /// The anchor's `trust_mark_issuers`: absent means it restricts nobody; present, the type
    /// must be listed, and an empty list lets anyone issue it (section 3.1.2).
    private func checkIssuerAllowed(_ iss: String, type: String) throws(TrustMarkRejection) {
        guard let claim = trustAnchor.claims["trust_mark_issuers"] else { return }
        guard let byType = claim.objectValue else { throw .untrustedIssuer("trust_mark_issuers is not an object") }
        guard let listed = byType[type] else { throw .untrustedIssuer("\(trustAnchor.subject) lists no issuers for \(type)") }
        guard let issuers = listed.stringArray else { throw .untrustedIssuer("trust_mark_issuers for \(type) is not a list of strings") }
        if !issuers.isEmpty && !issuers.contains(iss) {
            throw .untrustedIssuer("\(iss) is not among the issuers \(trustAnchor.subject) allows for \(type)")
        }
    }

    private struct Owner { let id: String; let keys: JWKSet }

    private func trustMarkOwner(of type: String) throws(TrustMarkRejection) -> Owner? {
        guard let entry = trustAnchor.claims["trust_mark_owners"]?[type] else { return nil }
        guard let id = entry["sub"]?.stringValue, let jwksJSON = entry["jwks"] else {
            throw .badDelegation("trust_mark_owners entry for \(type) lacks sub or jwks")
        }
        do { return Owner(id: id, keys: try JWKSet(json: jwksJSON)) } catch {
            throw .badDelegation("owner keys of \(type) are not a JWK set: \(error)")
        }
    }

    /// Section 7.2.2: typed, signed by the owner's keys from the anchor, naming the owner as
    /// issuer and the mark's issuer as subject, for the same type, and current.
    private func verifyDelegation(_ compact: String, owner: Owner, issuer: String, type: String) throws(TrustMarkRejection) -> Int64? {
        let decoded: (jws: JWS, claims: [String: JSONValue])
        do { decoded = try decode(compact, type: FederationType.trustMarkDelegation) } catch {
            throw .badDelegation("\(error)")
        }
        let (jws, claims) = decoded
        guard claims["iss"]?.stringValue == owner.id else { throw .badDelegation("not issued by the owner \(owner.id)") }
        guard claims["sub"]?.stringValue == issuer else { throw .badDelegation("not issued to \(issuer)") }
        guard claims["trust_mark_type"]?.stringValue == type else { throw .badDelegation("for another trust mark type") }
        let exp: Int64?
        do { exp = try checkTime(claims) } catch { throw .badDelegation("\(error)") }
        do {
            try jws.verify(keys: owner.keys, allowList: AlgorithmPolicy.federationDefault,
                               expectedType: FederationType.trustMarkDelegation)
        } catch {
            throw .badDelegation("signature does not verify with the owner's keys: \(error)")
        }
        return exp
    }
}

extension FederationHost {
    /// The marks among `entries` that validate against `trustAnchor` (section 7.3), each with
    /// the time it stops being valid; the resolver publishes only these. Invalid marks are
    /// dropped, never an error: a bad mark says nothing against the entity's chain.
    public func verifiedTrustMarks(_ entries: [TrustMarkEntry], subject: String, trustAnchor: EntityStatement,
                                   issuerKeys: (String) throws(FederationError) -> JWKSet,
                                   now: Int64) -> [(entry: TrustMarkEntry, expiresAt: Int64?)] {
        let verifier = TrustMarkVerifier(trustAnchor: trustAnchor, now: now, skew: limits.clockSkew)
        var out: [(entry: TrustMarkEntry, expiresAt: Int64?)] = []
        for entry in entries {
            do {
                out.append((entry, try verifier.verify(entry, subject: subject, issuerKeys: issuerKeys)))
            } catch {
                logger.debug("trust mark \(entry.trustMarkType) of \(subject) dropped: \(error)")
            }
        }
        return out
    }
}
