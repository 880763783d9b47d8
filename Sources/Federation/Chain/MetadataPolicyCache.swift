import JSON
import Support

/// Parsed and merged metadata policies, reused across resolves. Many chains share their
/// policies (every leaf under an intermediate gets the same `metadata_policy` in a different
/// statement), so a parsed policy is found by its content and a merge by the parsed policies it
/// combines; only applying the merged policy to the subject's metadata is left per resolve.
/// Both maps are bounded by entry count and start over when full: distinct policies are few.
public final class MetadataPolicyCache: Sendable {
    /// One statement's policy, parsed (with the chain's critical operators).
    final class ParsedPolicy: Sendable {
        let types: [String: MetadataPolicyParsing.Parsed]
        init(_ types: [String: MetadataPolicyParsing.Parsed]) { self.types = types }
    }

    private struct ContentKey: Hashable {
        let policy: JSONValue
        let critical: [String]
    }

    /// Parsed policies top-down; compared by identity. The key holds them, so an identity
    /// cannot be reused by another object while the key is stored.
    private struct MergeKey: Hashable {
        let parts: [ParsedPolicy]
        static func == (a: MergeKey, b: MergeKey) -> Bool {
            a.parts.count == b.parts.count && zip(a.parts, b.parts).allSatisfy { $0 === $1 }
        }
        func hash(into h: inout Hasher) { for p in parts { h.combine(ObjectIdentifier(p)) } }
    }

    typealias Merged = [String: MetadataPolicyParsing.Parsed]

    private let capacity: Int
    private let parsed = Locked<[ContentKey: Result<ParsedPolicy, MetadataPolicyError>]>([:])
    private let merges = Locked<[MergeKey: Result<Merged, MetadataPolicyError>]>([:])

    public init(capacity: Int = 1024) { self.capacity = max(1, capacity) }

    /// Section 6.1.4: the chain's policies (Trust Anchor's first) parsed with every critical
    /// operator of the chain, and merged per Entity Type.
    func merged(_ policies: [(policy: [String: JSONValue], crit: [String])]) throws(MetadataPolicyError) -> Merged {
        if policies.isEmpty { return [:] }
        let critical = Set(policies.flatMap(\.crit)).sorted()
        var parts: [ParsedPolicy] = []
        parts.reserveCapacity(policies.count)
        for p in policies { parts.append(try parse(p.policy, critical: critical)) }
        let key = MergeKey(parts: parts)
        if let hit = merges.read({ $0[key] }) { return try hit.get() }
        let result = Result { () throws(MetadataPolicyError) -> Merged in try MetadataPolicy.mergeLevels(parts.map(\.types)) }
        store(result, key, in: merges)
        return try result.get()
    }

    private func parse(_ policy: [String: JSONValue], critical: [String]) throws(MetadataPolicyError) -> ParsedPolicy {
        let key = ContentKey(policy: .object(policy), critical: critical)
        if let hit = parsed.read({ $0[key] }) { return try hit.get() }
        let result = Result { () throws(MetadataPolicyError) -> ParsedPolicy in
            ParsedPolicy(try MetadataPolicyParsing.policy(.object(policy), critical: Set(critical)))
        }
        store(result, key, in: parsed)
        return try result.get()
    }

    /// Entries held, for tests.
    var counts: (parsed: Int, merged: Int) { (parsed.read(\.count), merges.read(\.count)) }

    private func store<K, V>(_ value: V, _ key: K, in map: Locked<[K: V]>) {
        map.withLock { m in
            if m.count >= capacity { m.removeAll(keepingCapacity: true) }
            m[key] = value
        }
    }

    /// Applies merged policies (section 6.1.4.2): `MetadataPolicy.applyMerged`, the steps
    /// `MetadataPolicy.resolve` takes too.
    static func apply(_ merged: Merged, leafMetadata: [String: JSONValue],
                      superiorMetadata: [String: JSONValue]?) throws(MetadataPolicyError) -> [String: JSONValue] {
        try MetadataPolicy.applyMerged(merged, leafMetadata: leafMetadata, superiorMetadata: superiorMetadata)
    }
}
