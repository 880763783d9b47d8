import Federation
import JOSE
import JSON
import Support

/// One page of a superior's subordinates, each with what its superior's statement about it
/// says at a glance. Only the page shown is read: a superior of 1,000 leaves costs 100
/// statements per view, each from the host's signed-statement cache as `fetch` serves it (so
/// signed once per lifetime, not per view).
struct SubordinatePage: Sendable {
    static let size = 100

    struct Row: Sendable {
        let entityID: String
        /// From the subordinate statement (hosted superiors only; a remote one's is a link away).
        let expiresAt: Int64?
        let hasMetadataPolicy: Bool
        let hasConstraints: Bool
        let problem: String?
    }

    let superior: String
    let total: Int
    let offset: Int
    let rows: [Row]
    /// Where the list came from: the host's table, or the superior's list endpoint.
    let source: String

    var previousOffset: Int? { offset > 0 ? max(0, offset - Self.size) : nil }
    var nextOffset: Int? { offset + Self.size < total ? offset + Self.size : nil }
    var firstShown: Int { rows.isEmpty ? 0 : offset + 1 }
    var lastShown: Int { offset + rows.count }

    /// The offset actually used: negative becomes 0, past the end becomes the last page.
    static func clampedOffset(_ offset: Int, total: Int) -> Int {
        guard total > 0 else { return 0 }
        let lastPage = (total - 1) / size * size
        return min(max(0, offset), lastPage)
    }

    /// Nil when `superior` (an entity configuration) has no subordinates to show: a hosted
    /// entity that is no superior, or a remote one without a list endpoint.
    static func build(host: FederationHost, superior ec: EntityStatement, offset: Int, baseURL: String,
                      deadline: Deadline) throws(FederationError) -> SubordinatePage? {
        let id = ec.subject
        if host.entity(id) != nil {
            guard host.isSuperior(id) else { return nil }
            let all = host.subordinates(of: id).keys.sorted()
            let start = clampedOffset(offset, total: all.count)
            let rows = all[start..<min(all.count, start + size)].map { sub in
                hostedRow(host: host, superior: id, subject: sub)
            }
            return SubordinatePage(superior: id, total: all.count, offset: start, rows: rows, source: id + FederationEndpoint.list.path)
        }
        guard let endpoint = ec.metadata?["federation_entity"]?[FederationEndpoint.list.metadataParameter]?.stringValue else { return nil }
        guard let origin = FetchAllowList.origin(endpoint) else { throw .invalidRequest("\(endpoint) is not an http(s) URL") }
        guard origin != FetchAllowList.origin(baseURL) else { throw .notFound("\(endpoint) is not served here") }
        let body = try host.fetcher.get(endpoint, deadline: deadline)
        guard let list = (try? JSONValue.parse(Array(body.utf8)))?.arrayValue else {
            throw .invalidRequest("the answer of \(endpoint) is not a JSON array")
        }
        let all = list.compactMap(\.stringValue)
        let start = clampedOffset(offset, total: all.count)
        let rows = all[start..<min(all.count, start + size)].map {
            Row(entityID: $0, expiresAt: nil, hasMetadataPolicy: false, hasConstraints: false, problem: nil)
        }
        return SubordinatePage(superior: id, total: all.count, offset: start, rows: rows, source: endpoint)
    }

    private static func hostedRow(host: FederationHost, superior: String, subject: String) -> Row {
        do {
            let compact = try host.subordinateStatement(issuer: superior, subject: subject)
            let claims = try JWS.parseClaims(compact).claims
            return Row(entityID: subject, expiresAt: claims["exp"]?.intValue, hasMetadataPolicy: claims["metadata_policy"] != nil,
                       hasConstraints: claims["constraints"] != nil, problem: nil)
        } catch {
            return Row(entityID: subject, expiresAt: nil, hasMetadataPolicy: false, hasConstraints: false, problem: "\(error)")
        }
    }
}
