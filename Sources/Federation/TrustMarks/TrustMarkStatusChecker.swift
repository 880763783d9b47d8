import JOSE
import JSON
import Support

/// Sends Trust Mark Status requests (section 8.4.1) to other servers. A protocol so tests and
/// in-process federations need no network.
public protocol TrustMarkStatusClient: Sendable {
    /// POSTs `form` as `application/x-www-form-urlencoded` to `url` and returns the body of a
    /// 200 response; anything else (other status, timeout, oversize body) throws.
    func post(_ url: String, form: [(name: String, value: String)]) throws(FederationError) -> String
}

/// Asks remote trust mark issuers whether a mark is still active, with a short memory so a busy
/// resolver does not send one request per resolve. One per host: a reload starts afresh.
public final class TrustMarkStatusChecker: Sendable {
    /// How long an answer (active or not, failure included) is reused, in seconds. Also the
    /// longest a resolve answer built on it may be served (`TrustMarkVerification.dependsOnRemoteStatus`).
    public static let cacheLifetime: Int64 = 1

    private struct Key: Hashable {
        let endpoint: String
        /// SHA-256 of the mark, so the cache holds 64 characters per entry, not a whole JWT.
        let markID: String
    }

    private struct Answer {
        let active: Bool
        let reason: String
        let checkedAt: Int64
    }

    private let client: TrustMarkStatusClient?
    private let answers = Locked<[Key: Answer]>([:])
    private let capacity: Int

    /// `client` nil: no remote issuer can be asked, so marks of remote issuers that publish a
    /// status endpoint are treated as not active.
    public init(client: TrustMarkStatusClient?, capacity: Int = 1024) {
        self.client = client
        self.capacity = capacity
    }

    /// Throws unless `issuer`'s status endpoint says `jwt` is `active` now. `via` replaces the
    /// client for this request (the host's in-process answer for an endpoint under its own origin).
    func checkActive(_ jwt: String, issuer: String, endpoint: String, keys: JWKSet, now: Int64,
                     via: TrustMarkStatusClient? = nil) throws(TrustMarkRejection) {
        let key = Key(endpoint: endpoint, markID: TrustMarkID.of(jwt))
        if let hit = answers.read({ $0[key] }), now - hit.checkedAt < Self.cacheLifetime, hit.checkedAt <= now {
            if hit.active { return }
            throw .notActive(hit.reason)
        }
        let answer: Answer
        do {
            try ask(jwt, issuer: issuer, endpoint: endpoint, keys: keys, client: via ?? client)
            answer = Answer(active: true, reason: "", checkedAt: now)
        } catch {
            answer = Answer(active: false, reason: "\(error)", checkedAt: now)
        }
        answers.withLock { answers in
            if answers.count >= capacity { answers.removeAll(keepingCapacity: true) }
            answers[key] = answer
        }
        if !answer.active { throw .notActive(answer.reason) }
    }

    /// Section 8.4.2: a `trust-mark-status-response+jwt` signed with one of the issuer's
    /// Federation Entity Keys (by `kid`), issued by the issuer, about this very mark, with
    /// `status` `active`. Every other outcome is an error.
    private func ask(_ jwt: String, issuer: String, endpoint: String, keys: JWKSet, client: TrustMarkStatusClient?) throws(StatusFailure) {
        guard let client else { throw StatusFailure("no client to ask \(endpoint)") }
        let body: String
        do { body = try client.post(endpoint, form: [(name: "trust_mark", value: jwt)]) } catch {
            throw StatusFailure("status request to \(endpoint) failed: \(error.message)")
        }
        let jws: JWS
        let claims: [String: JSONValue]
        do {
            (jws, claims) = try JWS.parseClaims(body)
            try jws.verify(keys: keys, allowList: AlgorithmPolicy.federationDefault,
                           expectedType: FederationType.trustMarkStatusResponse)
        } catch {
            throw StatusFailure("status response from \(endpoint) does not verify: \(error)")
        }
        guard claims["iss"]?.stringValue == issuer else { throw StatusFailure("status response not issued by \(issuer)") }
        guard claims["trust_mark"]?.stringValue == jwt else { throw StatusFailure("status response is about another trust mark") }
        guard claims["iat"]?.intValue != nil else { throw StatusFailure("status response has no iat") }
        guard let status = claims["status"]?.stringValue else { throw StatusFailure("status response has no status") }
        guard status == TrustMarkStatus.active.rawValue else { throw StatusFailure("\(issuer) reports it \(status)") }
    }

    private struct StatusFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
