import Federation
import Foundation
import JOSE
import JSON
import Support

/// Everything the entity page shows about one entity, hosted here or not: its configuration
/// decoded and checked, its keys, superiors, metadata per entity type, trust marks with their
/// live status, a page of its subordinates and its historical keys.
struct EntityView: Sendable {
    let entityID: String
    let hosted: Bool
    let configuration: DecodedJWT
    let signature: SignatureVerdict
    let keys: [KeyRow]
    let authorityHints: [String]
    /// Entity type → its metadata, sorted by type.
    let metadata: [(type: String, value: JSONValue)]
    let trustMarks: [TrustMarkView]
    /// Marks hosted issuers revoked, which the configuration therefore no longer carries.
    let revokedMarks: [(issuer: String, type: String, reason: String, revokedAt: Int64)]
    let subordinates: SubordinatePage?
    let historicalKeys: HistoricalKeysView?
    /// What could not be shown (a part that failed to load), in words; the rest still is.
    let notes: [String]

    /// Builds the view. `offset`: the first subordinate shown. Remote statements are fetched
    /// within the resolver's budget and allow-list; failing to get the configuration itself is
    /// the page's failure, anything else a note.
    static func build(host: FederationHost, entityID: String, offset: Int, baseURL: String, deadline: Deadline) throws(ExplorerFailure) -> EntityView {
        let hosted = host.entity(entityID) != nil
        let ec: EntityStatement
        do { ec = try host.sourcedEntityConfiguration(of: entityID, deadline: deadline) } catch {
            throw .fetching("the entity configuration of \(entityID)", error, hosted: hosted)
        }
        let configURL = Self.configurationURL(of: entityID)
        guard let decoded = DecodedJWT(ec.compact, servedBy: configURL) else {
            throw ExplorerFailure(status: 422, title: "Statement refused", message: "the entity configuration of \(entityID) does not decode")
        }
        var notes: [String] = []
        var signature = SignatureVerdict.check(ec, with: ec.jwks, whose: "its own jwks (self-signed)")
        if ec.issuer != entityID || ec.subject != entityID {
            signature = SignatureVerdict(verifies: false, keyID: ec.keyID,
                                         detail: "iss/sub are \(ec.issuer)/\(ec.subject), not the entity ID; " + signature.detail)
        }
        let marks = ec.trustMarks.map { TrustMarkView(entry: $0, subject: entityID, host: host, deadline: deadline) }
        var subordinates: SubordinatePage?
        do {
            subordinates = try SubordinatePage.build(host: host, superior: ec, offset: offset, baseURL: baseURL, deadline: deadline)
        } catch {
            notes.append("subordinates: \(error.message)")
        }
        var historical: HistoricalKeysView?
        do { historical = try HistoricalKeysView.build(host: host, configuration: ec, baseURL: baseURL, deadline: deadline) } catch {
            notes.append("historical keys: \(error.message)")
        }
        return EntityView(
            entityID: entityID, hosted: hosted, configuration: decoded, signature: signature, keys: ec.jwks.keys.map(KeyRow.init),
            authorityHints: ec.authorityHints,
            metadata: (ec.metadata ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
            trustMarks: marks, revokedMarks: hosted ? host.revokedTrustMarks(for: entityID) : [],
            subordinates: subordinates, historicalKeys: historical, notes: notes)
    }

    /// Section 9: the configuration is at `/.well-known/openid-federation` under the entity ID.
    static func configurationURL(of entityID: String) -> String {
        var base = entityID
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/.well-known/openid-federation"
    }
}

/// One element of `trust_marks`: the mark decoded, its delegation decoded when it carries one,
/// and its live status.
struct TrustMarkView: Sendable {
    let type: String
    let issuer: String
    let jwt: DecodedJWT?
    let delegation: DecodedJWT?
    let status: TrustMarkLiveStatus

    init(entry: TrustMarkEntry, subject: String, host: FederationHost, deadline: Deadline) {
        type = entry.trustMarkType
        jwt = DecodedJWT(entry.trustMark, servedBy: nil)
        issuer = jwt?.claims["iss"]?.stringValue ?? "(unknown)"
        delegation = jwt?.claims["delegation"]?.stringValue.flatMap { DecodedJWT($0, servedBy: nil) }
        status = host.liveTrustMarkStatus(entry, subject: subject, deadline: deadline)
    }
}

/// The entity's historical keys (section 8.7): retired and revoked keys, with the reason.
struct HistoricalKeysView: Sendable {
    let endpoint: String
    let jwt: DecodedJWT
    let keys: [KeyRow]

    /// Nil when the entity publishes no historical keys endpoint. Hosted entities are read from
    /// the host (the signed, cached answer the endpoint serves); others fetched like statements.
    /// `baseURL`: this server's; a URL under its origin that is not hosted here is never fetched
    /// (a request from a worker to its own server can deadlock it, see FederationHost+OwnOrigin).
    static func build(host: FederationHost, configuration ec: EntityStatement, baseURL: String,
                      deadline: Deadline) throws(FederationError) -> HistoricalKeysView? {
        let endpoint = ec.metadata?["federation_entity"]?["federation_historical_keys_endpoint"]?.stringValue
        let compact: String
        let served: String
        if host.entity(ec.subject) != nil {
            compact = try host.historicalKeys(of: ec.subject)
            served = endpoint ?? ec.subject + FederationEndpoint.historicalKeys.path
        } else {
            guard let endpoint else { return nil }
            guard let origin = FetchAllowList.origin(endpoint) else { throw .invalidRequest("\(endpoint) is not an http(s) URL") }
            guard origin != FetchAllowList.origin(baseURL) else { throw .notFound("\(endpoint) is not served here") }
            compact = try host.fetcher.get(endpoint, deadline: deadline)
            served = endpoint
        }
        guard let jwt = DecodedJWT(compact, servedBy: served) else { throw .invalidRequest("the answer of \(served) is not a signed JWT") }
        return HistoricalKeysView(endpoint: served, jwt: jwt, keys: KeyRow.rows(jwt.claims))
    }
}
