import Foundation
import JSON
import Support
import XCTest
@testable import Federation

/// Not a timed test: prints resolves per second for 1 trust anchor → 1 intermediate → 2,000
/// leaves hosted in memory (the brief's target: ≥ 5,000 cold local resolves/s on 2 cores).
final class ResolveBenchmarkTests: XCTestCase {
    typealias F = FederationFixture

    func testLocalResolveThroughput() throws {
        let clock = ManualClock(1_800_000_000)
        let count = 2_000
        let leaves = (0..<count).map { i in
            HostedEntity(name: "leaf\(i)", entityID: F.base + "/leaf\(i)", authorityHints: [F.intermediate],
                         metadata: ["openid_credential_issuer": ["credential_issuer": .string(F.base + "/leaf\(i)")]])
        }
        let (host, keys, fetcher) = try F.demo(clock: clock, entities: [F.trustAnchorEntity(trustMarksIssued: []), F.intermediateEntity()] + leaves)
        let anchors: [String: TrustAnchorKeys] = [F.trustAnchor: .known(try keys.publicKeys(for: F.trustAnchor))]
        let ids = leaves.map(\.entityID)

        func rate(_ label: String, threads: Int = 1, _ body: @Sendable (String) throws -> Void) rethrows {
            let start = Date()
            if threads == 1 {
                for id in ids { try body(id) }
            } else {
                DispatchQueue.concurrentPerform(iterations: threads) { t in
                    for (i, id) in ids.enumerated() where i % threads == t { try? body(id) }
                }
            }
            let seconds = Date().timeIntervalSince(start)
            print(String(format: "resolve benchmark: %@: %.0f/s (%d in %.3f s, %d thread(s))", label, Double(ids.count) / seconds, ids.count, seconds, threads))
        }
        try rate("chain, statements signed on first use") { id in _ = try host.resolveChain(subject: id, anchors: anchors) }
        try rate("chain, statements cached") { id in _ = try host.resolveChain(subject: id, anchors: anchors) }
        try rate("chain, statements cached", threads: 2) { id in _ = try host.resolveChain(subject: id, anchors: anchors) }
        try rate("signed resolve response, cold") { id in
            _ = try host.resolveResponse(resolver: F.trustAnchor, subject: id, trustAnchors: [F.trustAnchor], entityTypes: [])
        }
        try rate("signed resolve response, cold", threads: 2) { id in
            _ = try host.resolveResponse(resolver: F.trustAnchor, subject: id, trustAnchors: [F.trustAnchor], entityTypes: ["openid_credential_issuer"])
        }
        XCTAssertTrue(fetcher.requests.isEmpty)
    }
}
