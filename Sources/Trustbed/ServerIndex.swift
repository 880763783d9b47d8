import Federation
import HTTP
import JSON
import Support

/// The JSON index at `/`: counts, then one page of entities. At 100,000 entities the whole list
/// is megabytes that every curl of `/` would pay for; a page is bounded whatever the size.
struct ServerIndex: Sendable {
    /// In name order. The entities themselves (a reference each), not copies of their names and IDs.
    private let rows: [HostedEntity]
    private let counts: JSONValue
    let baseURL: String

    static let defaultLimit = 100
    static let maxLimit = 1000

    init(entities: [HostedEntity], superiors: Set<String>, baseURL: String) {
        // The catalog is already in name order; sorting is kept for other callers.
        rows = entities.sorted { $0.name < $1.name }
        let anchors = entities.filter(\.isTrustAnchor).count
        let intermediates = entities.filter { !$0.isTrustAnchor && superiors.contains($0.entityID) }.count
        counts = [
            "entities": .int(Int64(entities.count)),
            "trust_anchors": .int(Int64(anchors)),
            "intermediates": .int(Int64(intermediates)),
            "leaves": .int(Int64(entities.count - anchors - intermediates)),
        ]
        self.baseURL = baseURL
    }

    /// The page at `offset` of at most `limit` entities; `next` is absent on the last page.
    func page(_ parameters: Parameters) throws(HTTPError) -> JSONValue {
        let offset = try Self.number(parameters, "offset", default: 0, range: 0...Int.max)
        let limit = try Self.number(parameters, "limit", default: Self.defaultLimit, range: 1...Self.maxLimit)
        let slice = rows.dropFirst(offset).prefix(limit)
        var out: [String: JSONValue] = [
            "service": "trustbed",
            "counts": counts,
            "offset": .int(Int64(offset)),
            "limit": .int(Int64(limit)),
            "entities": .array(slice.map { r in
                [
                    "name": .string(r.name),
                    "entity_id": .string(r.entityID),
                    "entity_configuration": .string(r.entityID + "/.well-known/openid-federation"),
                    "trust_anchor": .bool(r.isTrustAnchor),
                ]
            }),
        ]
        if offset + limit < rows.count {
            out["next"] = .string("\(baseURL)/?offset=\(offset + limit)&limit=\(limit)")
        }
        return .object(out)
    }

    private static func number(_ p: Parameters, _ name: String, default value: Int, range: ClosedRange<Int>) throws(HTTPError) -> Int {
        let values = p.all(name)
        guard values.count <= 1 else { throw .badRequest("\(name) must not appear more than once") }
        guard let text = values.first else { return value }
        guard let n = Int(text), range.contains(n) else {
            throw .badRequest("\(name) must be an integer in \(range.lowerBound)...\(range.upperBound == Int.max ? "" : String(range.upperBound))")
        }
        return n
    }
}
