#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Federation
import JSON
import Support

/// The hierarchy of the hosted federation as the explorer shows it: Trust Anchors, then each
/// superior's subordinates one level (and one page) at a time. Built from the running host and
/// kept with it: the host is immutable and replaced whole on every reload, so what is worked
/// out here (the counts, each superior's subordinates in order, who holds which trust mark)
/// is worked out once per host, on first use rather than during the host build, which must
/// not get slower for a page few people open.
///
/// At 100,000 entities one superior may have 100,000 subordinates in a dictionary: sorting
/// them per request would cost more than the page's 50 ms budget, so the order is kept.
public final class FederationTree: Sendable {
    public let host: FederationHost
    /// The largest page of subordinates (or search results) a page shows.
    public static let pageLimit = 100

    private let summary = Locked<Summary?>(nil)
    private let orderedChildren = Locked<[String: [SubordinateEntry]]>([:])
    private let renderings = Locked<[String: [UInt8]]>([:])

    public init(host: FederationHost) { self.host = host }

    /// What is counted once per host.
    struct Summary: Sendable {
        let counts: FederationCounts
        let trustAnchors: [String]
        /// Subject entity ID → trust mark types local issuers declare for it (sorted, unique).
        let trustMarkTypes: [String: [String]]
    }

    var overview: Summary {
        if let done = summary.current { return done }
        // Worked out outside the lock: two requests racing here both compute, and one wins.
        let made = Self.summarize(host)
        summary.withLock { if $0 == nil { $0 = made } }
        return made
    }

    public var counts: FederationCounts { overview.counts }
    public var trustAnchorIDs: [String] { overview.trustAnchors }

    /// The same counts as the JSON index at `/`: an intermediate is a hosted entity that is not
    /// a Trust Anchor and has subordinates; every other hosted entity is a leaf.
    private static func summarize(_ host: FederationHost) -> Summary {
        var anchors: [String] = []
        var intermediates = 0
        var marks: [String: Set<String>] = [:]
        for entity in host.entities.values {
            if entity.isTrustAnchor {
                anchors.append(entity.entityID)
            } else if host.subordinatesBySuperior[entity.entityID] != nil {
                intermediates += 1
            }
            for issued in entity.trustMarksIssued {
                for subject in issued.subjects { marks[subject, default: []].insert(issued.trustMarkType) }
            }
        }
        let total = host.entities.count
        return Summary(
            counts: FederationCounts(entities: total, trustAnchors: anchors.count, intermediates: intermediates,
                                     leaves: total - anchors.count - intermediates),
            trustAnchors: anchors.sorted(by: Self.precedes),
            trustMarkTypes: marks.mapValues { $0.sorted() })
    }

    /// Byte order of the UTF-8: stable, and several times cheaper than `String`'s Unicode
    /// comparison on 100,000 entity IDs (one `memcmp`, not a generic sequence comparison).
    static func precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
                return order != 0 ? order < 0 : x.count < y.count
            }
        }
    }

    /// `superiorID`'s subordinates: intermediates first (they are what one opens next), then
    /// leaves, each in entity ID order. Sorted on first use and kept.
    func children(of superiorID: String) -> [SubordinateEntry] {
        if let done = orderedChildren.read({ $0[superiorID] }) { return done }
        // Each entry's rank looked up once, not in every comparison.
        let made = host.subordinates(of: superiorID).values.map { (superior: host.isSuperior($0.entityID), entry: $0) }
            .sorted { a, b in
                if a.superior != b.superior { return a.superior }
                return Self.precedes(a.entry.entityID, b.entry.entityID)
            }
            .map(\.entry)
        orderedChildren.withLock { $0[superiorID] = made }
        return made
    }

    /// What a page made of this host alone renders (the landing page, the picture), made on
    /// first use and kept as long as the host: both change only when the host is replaced.
    func rendered(_ key: String, _ make: () -> [UInt8]) -> [UInt8] {
        if let done = renderings.read({ $0[key] }) { return done }
        let made = make()
        renderings.withLock { $0[key] = $0[key] ?? made }
        return made
    }

    /// One entity as a node: hosted entities from their declaration (entity types are the
    /// metadata keys the entity configuration publishes), others from what the superior
    /// declares about them (`entry`, whose `entity_types` is what `list` reports).
    public func node(_ entityID: String, entry: SubordinateEntry? = nil) -> TreeNode {
        let marks = overview.trustMarkTypes[entityID] ?? []
        guard let entity = host.entity(entityID) else {
            return TreeNode(entityID: entityID, name: entityID, hosted: false, isTrustAnchor: false, isSuperior: false,
                            organizationName: nil, entityTypes: (entry?.entityTypes ?? []).sorted(), trustMarkTypes: marks,
                            subordinateCount: 0)
        }
        let metadata = host.publishedMetadata(of: entity)
        return TreeNode(entityID: entityID, name: entity.name, hosted: true, isTrustAnchor: entity.isTrustAnchor,
                        isSuperior: host.isSuperior(entityID),
                        organizationName: metadata["federation_entity"]?["organization_name"]?.stringValue,
                        entityTypes: metadata.keys.sorted(), trustMarkTypes: marks,
                        subordinateCount: host.subordinatesBySuperior[entityID]?.count ?? 0)
    }

    /// One page of `superiorID`'s subordinates, and the way up to a Trust Anchor.
    /// Nil when `superiorID` is not hosted here.
    public func level(_ superiorID: String, offset: Int, limit: Int = FederationTree.pageLimit) -> TreeLevel? {
        guard host.entity(superiorID) != nil else { return nil }
        let all = children(of: superiorID)
        let start = min(offset, all.count)
        let page = all[start..<min(all.count, start + limit)].map { node($0.entityID, entry: $0) }
        return TreeLevel(node: node(superiorID), path: path(to: superiorID), children: page, offset: start, limit: limit,
                         total: all.count)
    }

    /// The superiors above `entityID`, from a Trust Anchor down (the first hosted authority
    /// hint at each step), without `entityID` itself. Bounded and loop-safe: the catalog refuses
    /// loops among local entities, but a page must not trust that.
    func path(to entityID: String) -> [TreeNode] {
        var out: [TreeNode] = []
        var seen: Set<String> = [entityID]
        var current = host.entity(entityID)
        while let entity = current, !entity.isTrustAnchor, out.count < 16,
              let up = entity.authorityHints.first(where: { host.entity($0) != nil && !seen.contains($0) }) {
            seen.insert(up)
            out.append(node(up))
            current = host.entity(up)
        }
        return out.reversed()
    }
}

/// The figures at the top of the landing page (and of the JSON index).
public struct FederationCounts: Sendable, Equatable {
    public let entities: Int
    public let trustAnchors: Int
    public let intermediates: Int
    public let leaves: Int
}

/// An entity as a tree node with its badges.
public struct TreeNode: Sendable, Equatable {
    public let entityID: String
    /// The file name of a hosted entity; the entity ID of another server's.
    public let name: String
    public let hosted: Bool
    public let isTrustAnchor: Bool
    /// Hosted and serving fetch/list (a Trust Anchor, or an entity with subordinates).
    public let isSuperior: Bool
    public let organizationName: String?
    /// Metadata keys (entity types), sorted.
    public let entityTypes: [String]
    /// Trust mark types declared for it by local issuers, sorted.
    public let trustMarkTypes: [String]
    public let subordinateCount: Int
}

/// One page of a superior's subordinates.
public struct TreeLevel: Sendable {
    public let node: TreeNode
    /// From a Trust Anchor down to the superior above `node`.
    public let path: [TreeNode]
    public let children: [TreeNode]
    public let offset: Int
    public let limit: Int
    public let total: Int

    public var nextOffset: Int? { offset + limit < total ? offset + limit : nil }
    public var previousOffset: Int? { offset > 0 ? max(0, offset - limit) : nil }
}
