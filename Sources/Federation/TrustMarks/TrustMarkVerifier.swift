import JOSE
import JSON

/// Why a trust mark was not accepted; only logged, since an invalid mark is dropped, not an error.
enum TrustMarkRejection: Error, CustomStringConvertible {
    case malformed(String)
    case wrongSubject(String)
    case notYetValid
    case expired
    case untrustedIssuer(String)
    /// The issuer has no valid chain to the subject's Trust Anchor (rule 3).
    case issuerWithoutChain(String)
    case badSignature(String)
    case badDelegation(String)
    case notActive(String)

    var description: String {
        switch self {
        case .malformed(let m): return "malformed: \(m)"
        case .wrongSubject(let s): return "issued to \(s)"
        case .notYetValid: return "issued in the future"
        case .expired: return "expired"
        case .untrustedIssuer(let m), .issuerWithoutChain(let m): return "issuer not trusted: \(m)"
        case .badSignature(let m): return "signature does not verify: \(m)"
        case .badDelegation(let m): return "delegation invalid: \(m)"
        case .notActive(let m): return "not active: \(m)"
        }
    }

    /// The rule of `TrustMarkVerifier` (1 to 5) the mark fails.
    var rule: Int {
        switch self {
        case .malformed, .wrongSubject, .notYetValid, .expired: return 1
        case .untrustedIssuer: return 2
        case .issuerWithoutChain, .badSignature: return 3
        case .badDelegation: return 4
        case .notActive: return 5
        }
    }
}

/// A trust mark left out of a resolve answer, with why (for the explorer; the resolver only logs it).
public struct RejectedTrustMark: Sendable {
    public let entry: TrustMarkEntry
    /// The rule of `TrustMarkVerifier` (and of docs/federation.md) it fails, 1 to 5.
    public let rule: Int
    public let reason: String
}

/// What the resolver learned about a trust mark issuer by resolving a trust chain for it.
public struct TrustMarkIssuerTrust: Sendable {
    /// The issuer's Federation Entity Keys, which sign its marks and status responses.
    public let keys: JWKSet
    /// `federation_trust_mark_status_endpoint` from the issuer's own entity configuration
    /// (section 8.4: it is published there, never in subordinate statements); nil when none.
    public let statusEndpoint: String?
    /// The Trust Anchor the issuer's chain ends at, when known; it must be the subject's.
    public let trustAnchor: String?

    public init(keys: JWKSet, statusEndpoint: String? = nil, trustAnchor: String? = nil) {
        self.keys = keys
        self.statusEndpoint = statusEndpoint
        self.trustAnchor = trustAnchor
    }

    /// From a validated chain whose subject is the issuer.
    public init(chain: TrustChain) {
        keys = chain.subject.jwks
        statusEndpoint = chain.subject.metadata?["federation_entity"]?["federation_trust_mark_status_endpoint"]?.stringValue
        trustAnchor = chain.trustAnchor.subject
    }
}

/// A trust mark the resolver may publish.
public struct VerifiedTrustMark: Sendable {
    public let entry: TrustMarkEntry
    public let issuer: String
    /// The earlier of the mark's and its delegation's `exp`; nil when neither expires.
    public let expiresAt: Int64?
}

/// The marks of one subject that passed, and whether a remote issuer's status endpoint decided
/// any of them.
public struct TrustMarkVerification: Sendable {
    public let marks: [VerifiedTrustMark]
    /// True when a remote issuer's Trust Mark Status endpoint was consulted (whether the mark
    /// was kept or dropped): an answer built from this result must not be reused for longer
    /// than `TrustMarkStatusChecker.cacheLifetime` (1 s), or a revocation would go unseen.
    public let dependsOnRemoteStatus: Bool
    /// The marks left out, each with its reason.
    public var rejected: [RejectedTrustMark] = []
}

/// Validates trust marks found in a subject's entity configuration against the Trust Anchor its
/// chain was resolved to.
///
/// A trust mark is accepted only when all of these hold (OpenID Federation 1.0, sections 7,
/// 7.2.2, 7.3, 3.1.2 and 8.4):
/// 1. It is a signed `trust-mark+jwt` whose `sub` is the subject, whose `trust_mark_type` is the
///    one its `trust_marks` entry names, whose `iat` is not in the future and whose `exp`, if
///    any, has not passed.
/// 2. The Trust Anchor accepts its issuer for that type: the anchor's entity configuration has
///    a `trust_mark_issuers` claim that lists the type, and the issuer is in that type's list, or
///    the list is empty (then anyone may issue it). An anchor without `trust_mark_issuers`, or
///    one that does not list the type, accepts no issuer for it: section 7 says that a Trust
///    Mark Issuer is accepted by the federation through that claim.
/// 3. The issuer has a valid trust chain to that same Trust Anchor (section 7.3: trust in the
///    issuer comes before trust in the mark; "anyone" still means an entity of the federation),
///    and the mark's signature verifies with the issuer's Federation Entity Keys from that chain,
///    using the key its `kid` names.
/// 4. If the anchor's `trust_mark_owners` names an owner for the type, the mark carries a
///    `delegation`: a `trust-mark-delegation+jwt` signed with the owner's keys as listed there,
///    issued by the owner to the mark's issuer for the same type, and current. A delegation for a
///    type that has no owner cannot be validated, so such a mark is refused.
/// 5. It is active now: for an issuer hosted on this server, no revocation is recorded for it;
///    for any other issuer that publishes a `federation_trust_mark_status_endpoint`, its signed
///    status response (verified with the issuer's keys) says `active`. A failed or timed-out
///    status request counts as not active; answers are cached for one second.
struct TrustMarkVerifier {
    let trustAnchor: EntityStatement
    let now: Int64
    let skew: Int64

    /// Checks 1 to 4 above. `issuer` is only asked once every cheaper check has passed, because
    /// it resolves a whole trust chain for the issuer.
    func verify(_ entry: TrustMarkEntry, subject: String,
                issuer: (String) throws(FederationError) -> TrustMarkIssuerTrust) throws(TrustMarkRejection) -> (VerifiedTrustMark, TrustMarkIssuerTrust) {
        let (jws, claims) = try decode(entry.trustMark, type: FederationType.trustMark)
        guard let iss = claims["iss"]?.stringValue, !iss.isEmpty else { throw .malformed("iss missing") }
        guard let sub = claims["sub"]?.stringValue else { throw .malformed("sub missing") }
        guard let type = claims["trust_mark_type"]?.stringValue else { throw .malformed("trust_mark_type missing") }
        guard type == entry.trustMarkType else { throw .malformed("trust_mark_type \(type) differs from the entry's \(entry.trustMarkType)") }
        guard sub == subject else { throw .wrongSubject(sub) }
        var expiresAt = try checkTime(claims)

        try checkIssuerAccepted(iss, type: type)
        let owner = trustAnchor.trustMarkOwners?[type]
        var delegationExpiry: Int64?
        if let delegation = claims["delegation"] {
            guard let owner else { throw .badDelegation("the trust anchor names no owner for \(type)") }
            guard let compact = delegation.stringValue else { throw .badDelegation("not a string") }
            delegationExpiry = try verifyDelegation(compact, owner: owner, issuer: iss, type: type)
        } else if owner != nil {
            throw .badDelegation("the trust anchor names an owner for \(type), so a delegation is required")
        }

        let trust: TrustMarkIssuerTrust
        do { trust = try issuer(iss) } catch { throw .issuerWithoutChain("no trust chain for \(iss): \(error.message)") }
        if let anchor = trust.trustAnchor, anchor != trustAnchor.subject {
            throw .issuerWithoutChain("the chain of \(iss) ends at \(anchor), not at \(trustAnchor.subject)")
        }
        do {
            try jws.verify(keys: trust.keys, allowList: AlgorithmPolicy.federationDefault, expectedType: FederationType.trustMark)
        } catch {
            throw .badSignature("\(error)")
        }
        if let d = delegationExpiry { expiresAt = min(expiresAt ?? d, d) }
        return (VerifiedTrustMark(entry: entry, issuer: iss, expiresAt: expiresAt), trust)
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

    /// Rule 2 of the type's doc comment.
    private func checkIssuerAccepted(_ iss: String, type: String) throws(TrustMarkRejection) {
        guard let byType = trustAnchor.trustMarkIssuers else {
            throw .untrustedIssuer("\(trustAnchor.subject) publishes no trust_mark_issuers, so it accepts no issuer")
        }
        guard let issuers = byType[type] else { throw .untrustedIssuer("\(trustAnchor.subject) lists no issuers for \(type)") }
        if !issuers.isEmpty && !issuers.contains(iss) {
            throw .untrustedIssuer("\(iss) is not among the issuers \(trustAnchor.subject) accepts for \(type)")
        }
    }

    /// Section 7.2.2: typed, signed by the owner's keys from the anchor, naming the owner as
    /// issuer and the mark's issuer as subject, for the same type, and current.
    private func verifyDelegation(_ compact: String, owner: TrustMarkOwner, issuer: String, type: String) throws(TrustMarkRejection) -> Int64? {
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
    /// The marks among `entries` that pass every rule of `TrustMarkVerifier` against
    /// `trustAnchor`, each with the time it stops being valid; the resolver publishes only
    /// these. Invalid or inactive marks are dropped, never an error: a bad mark says nothing
    /// against the entity's chain. `issuer` resolves a chain for a mark's issuer (to the same
    /// anchor); `status` asks remote issuers' status endpoints and caches their answers.
    public func verifiedTrustMarks(_ entries: [TrustMarkEntry], subject: String, trustAnchor: EntityStatement,
                                   issuer: (String) throws(FederationError) -> TrustMarkIssuerTrust,
                                   status: TrustMarkStatusChecker, now: Int64) -> TrustMarkVerification {
        let verifier = TrustMarkVerifier(trustAnchor: trustAnchor, now: now, skew: limits.clockSkew)
        var kept: [VerifiedTrustMark] = []
        var rejected: [RejectedTrustMark] = []
        var remote = false
        for entry in entries {
            do throws(TrustMarkRejection) {
                let (mark, trust) = try verifier.verify(entry, subject: subject, issuer: issuer)
                if entities[mark.issuer] != nil {
                    try checkLocallyActive(mark, subject: subject)
                } else if let endpoint = trust.statusEndpoint {
                    remote = true
                    try status.checkActive(mark.entry.trustMark, issuer: mark.issuer, endpoint: endpoint, keys: trust.keys, now: now,
                                           via: isOwnOrigin(endpoint) ? OwnOriginStatusClient(host: self) : nil)
                }
                kept.append(mark)
            } catch {
                logger.debug("trust mark \(entry.trustMarkType) of \(subject) dropped: \(error)")
                rejected.append(RejectedTrustMark(entry: entry, rule: error.rule, reason: error.description))
            }
        }
        return TrustMarkVerification(marks: kept, dependsOnRemoteStatus: remote, rejected: rejected)
    }

    /// The signature-only form used before status checks existed: local revocations are still
    /// honoured, remote issuers are not asked. Kept while the resolver moves to the form above.
    @available(*, deprecated, message: "use verifiedTrustMarks(_:subject:trustAnchor:issuer:status:now:)")
    public func verifiedTrustMarks(_ entries: [TrustMarkEntry], subject: String, trustAnchor: EntityStatement,
                                   issuerKeys: (String) throws(FederationError) -> JWKSet,
                                   now: Int64) -> [VerifiedTrustMark] {
        verifiedTrustMarks(entries, subject: subject, trustAnchor: trustAnchor,
                           issuer: { id throws(FederationError) in TrustMarkIssuerTrust(keys: try issuerKeys(id)) },
                           status: TrustMarkStatusChecker(client: nil), now: now).marks
    }

    /// Rule 5 for an issuer hosted here: the records the status endpoint answers from. A record
    /// revoked, or a standing revocation of (issuer, type, subject), means not active; a mark
    /// with no record (the signature already showed it is ours) is active unless revoked that way.
    private func checkLocallyActive(_ mark: VerifiedTrustMark, subject: String) throws(TrustMarkRejection) {
        let revokedRecord: Bool
        let standing: Bool
        do {
            revokedRecord = try trustMarkRepository.find(id: TrustMarkID.of(mark.entry.trustMark))?.revokedAt != nil
            standing = try trustMarkRepository.revocation(issuer: mark.issuer, trustMarkType: mark.entry.trustMarkType,
                                                         subject: subject) != nil
        } catch {
            throw .notActive("reading revocations failed: \(error)")
        }
        if revokedRecord || standing { throw .notActive("revoked by \(mark.issuer)") }
    }
}
