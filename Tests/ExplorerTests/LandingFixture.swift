@testable import Explorer
import Federation
import JSON
import Store
import Support

/// A hosted federation for the landing page's tests: a Trust Anchor, intermediates and leaves
/// built as values (no keys: nothing here signs), with the host the server would build.
enum LandingFixture {
    static let base = "https://fed.example"

    struct NoFetch: StatementFetcher {
        func get(_ url: String) throws(FederationError) -> String { throw .notFound("no network in tests") }
    }

    static func host(_ entities: [HostedEntity]) throws -> FederationHost {
        FederationHost(entities: entities, keys: NoKeys(), clock: ManualClock(1_800_000_000),
                       database: try Database(path: ":memory:"), fetcher: NoFetch(), baseURL: base)
    }

    static func id(_ name: String) -> String { "\(base)/\(name)" }

    static func org(_ name: String) -> [String: JSONValue] {
        ["federation_entity": ["organization_name": .string(name)]]
    }

    /// `ta` → `int-a` (with `leaves` leaves `leaf-000`...), `int-b` (one leaf), plus a remote
    /// subordinate of `ta` and a trust mark `ta` gives `leaf-001`.
    static func federation(leaves: Int = 3) throws -> FederationHost {
        var list = [
            HostedEntity(name: "ta", entityID: id("ta"), isTrustAnchor: true, metadata: org("Demo Anchor"),
                         subordinates: ["https://other.example/rp": SubordinateEntry(
                             entityID: "https://other.example/rp", entityTypes: ["openid_relying_party"])],
                         trustMarkIssuers: ["https://marks.example/tm/certified": [id("ta")]],
                         trustMarksIssued: [TrustMarkIssuance(trustMarkType: "https://marks.example/tm/certified",
                                                              subjects: [id("leaf-001")])]),
            HostedEntity(name: "int-a", entityID: id("int-a"), authorityHints: [id("ta")], metadata: org("Alpha Intermediate")),
            HostedEntity(name: "int-b", entityID: id("int-b"), authorityHints: [id("ta")], metadata: org("Beta Intermediate")),
            HostedEntity(name: "solo", entityID: id("solo"), authorityHints: [id("int-b")],
                         metadata: ["openid_credential_verifier": ["client_name": "Solo"]]),
        ]
        for n in 0..<leaves {
            let name = "leaf-" + String(repeating: "0", count: max(0, 3 - String(n).count)) + String(n)
            list.append(HostedEntity(name: name, entityID: id(name), authorityHints: [id("int-a")],
                                     metadata: ["openid_relying_party": ["client_name": .string("RP \(n)")]]
                                         .merging(n == 2 ? org("<script>alert(1)</script>") : [:]) { $1 }))
        }
        return try host(list)
    }
}
