import Cryptography
import Federation
import Foundation
import JOSE
import JSON
import Store
import Support

/// A small hosted federation for the explorer's model tests: a Trust Anchor that issues a trust
/// mark to a leaf under an intermediate, and `leaves` more leaves under the intermediate (for
/// pagination). Keys live in memory; nothing is fetched (the fetcher refuses every URL, so a
/// remote entity ID fails as one outside the allow-list would).
enum EntityModelFixture {
    static let base = "https://explorer.test"
    static let ta = base + "/ta"
    static let intermediate = base + "/intermediate"
    static let leaf = base + "/leaf"
    static let mark = "https://explorer.test/marks/good"

    static func entities(leaves: Int = 0, markLifetime: Int64? = nil) -> [HostedEntity] {
        var list = [
            HostedEntity(name: "ta", entityID: ta, isTrustAnchor: true,
                         metadata: ["federation_entity": ["organization_name": "TA"]],
                         trustMarkIssuers: [mark: [ta]],
                         trustMarksIssued: [TrustMarkIssuance(trustMarkType: mark, subjects: [leaf], lifetime: markLifetime)]),
            HostedEntity(name: "intermediate", entityID: intermediate, authorityHints: [ta],
                         metadata: ["federation_entity": ["organization_name": "Intermediate"]]),
            HostedEntity(name: "leaf", entityID: leaf, authorityHints: [intermediate],
                         metadata: ["openid_relying_party": ["client_name": "<script>alert(1)</script>"]]),
        ]
        for i in 0..<leaves {
            list.append(HostedEntity(name: "l\(i)", entityID: base + String(format: "/l%04d", i), authorityHints: [intermediate]))
        }
        return list
    }

    static func host(clock: Clock, keys: MemoryKeys, database: Database, leaves: Int = 0, markLifetime: Int64? = nil) -> FederationHost {
        FederationHost(entities: entities(leaves: leaves, markLifetime: markLifetime), keys: keys, clock: clock, database: database,
                       fetcher: RefusingFetcher())
    }
}

struct RefusingFetcher: StatementFetcher {
    func get(_ url: String) throws(FederationError) -> String {
        throw .invalidRequest("fetching \(url) is not allowed by this server's fetch allow-list (--fetch-allow)")
    }
}

/// One ES256 key per entity, made on first use; `rotate` retires it as a historical key.
final class MemoryKeys: KeyProvider, @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [String: (signing: SigningKey, jwk: JWK)] = [:]
    private var retired: [String: [JWK]] = [:]

    func signingKey(for entityID: String) throws(FederationError) -> SigningKey { try current(entityID).signing }
    func publicKeys(for entityID: String) throws(FederationError) -> JWKSet { JWKSet(keys: [try current(entityID).jwk]) }
    func historicalKeys(for entityID: String) throws(FederationError) -> [JWK] { lock.withLock { retired[entityID] ?? [] } }

    func revokeCurrent(_ entityID: String, reason: String, at time: Int64) throws {
        let old = try current(entityID).jwk
        lock.withLock {
            keys[entityID] = nil
            retired[entityID, default: []].append(old.adding(["exp": .int(time), "revoked": ["revoked_at": .int(time), "reason": .string(reason)]]))
        }
    }

    private func current(_ entityID: String) throws(FederationError) -> (signing: SigningKey, jwk: JWK) {
        lock.lock()
        defer { lock.unlock() }
        if let k = keys[entityID] { return k }
        do {
            let privateKey = try PrivateKey(generatingFor: .ES256)
            let jwk = JWK(publicKey: privateKey.publicKey, algorithm: .ES256)
            let k = (SigningKey(privateKey: privateKey, algorithm: .ES256, kid: jwk.kid ?? "k"), jwk)
            keys[entityID] = k
            return k
        } catch {
            throw .serverError("key generation failed: \(error)")
        }
    }
}
