#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Federation
import Support

/// Finds entities by name, entity ID or `federation_entity.organization_name`: a
/// case-insensitive substring match, results in entity ID order, a page at a time.
///
/// The haystacks are built once per host, on the first search: reading an organization name
/// means parsing the entity's metadata, which for 100,000 entities takes a good part of a
/// second, far too much per request and too much to add to every host build. A search is then
/// one `memmem` per entity over a few dozen bytes.
public final class EntitySearch: Sendable {
    public let tree: FederationTree
    /// Longer queries are refused: nothing here has names that long, and a page echoes it.
    public static let maxQueryLength = 256

    private let index = Locked<Index?>(nil)

    public init(tree: FederationTree) { self.tree = tree }

    /// Every entity's haystack (name, entity ID and organization name, lower-cased, separated
    /// by NUL so that no match spans two of them) in one buffer, in entity ID order: at 100,000
    /// entities an array per entity would cost megabytes of headers alone.
    struct Index: Sendable {
        var entityIDs: [String] = []
        /// The superior that declares a remote entity, for its node's entity types.
        var declaredBy: [String?] = []
        var text: [UInt8] = []
        /// Where each entity's haystack ends in `text` (it starts where the previous one ends).
        var ends: [Int] = []
    }

    private var built: Index {
        if let done = index.current { return done }
        let made = Self.build(tree.host)
        index.withLock { if $0 == nil { $0 = made } }
        return made
    }

    /// Hosted entities, and the other servers' entities hosted superiors declare as subordinates
    /// (by entity ID only: their names and metadata are not here without a fetch).
    private static func build(_ host: FederationHost) -> Index {
        var rows: [(id: String, haystack: String, declaredBy: String?)] = []
        rows.reserveCapacity(host.entities.count)
        for entity in host.entities.values {
            var text = entity.name.lowercased() + "\u{0}" + entity.entityID.lowercased()
            if let org = entity.metadata["federation_entity"]?["organization_name"]?.stringValue {
                text += "\u{0}" + org.lowercased()
            }
            rows.append((entity.entityID, text, nil))
        }
        var remote: [String: String] = [:]
        for (superior, subordinates) in host.subordinatesBySuperior {
            for id in subordinates.keys where host.entity(id) == nil {
                if let known = remote[id], FederationTree.precedes(known, superior) { continue }
                remote[id] = superior
            }
        }
        for (id, superior) in remote { rows.append((id, id.lowercased(), superior)) }
        rows.sort { FederationTree.precedes($0.id, $1.id) }
        var index = Index()
        index.entityIDs.reserveCapacity(rows.count)
        index.declaredBy.reserveCapacity(rows.count)
        index.ends.reserveCapacity(rows.count)
        for row in rows {
            index.entityIDs.append(row.id)
            index.declaredBy.append(row.declaredBy)
            index.text.append(contentsOf: row.haystack.utf8)
            index.ends.append(index.text.count)
        }
        return index
    }

    /// The page of matches for `query` starting at `offset`. An empty (or all-space) query
    /// matches nothing: the page then shows the form alone.
    public func search(_ query: String, offset: Int, limit: Int = FederationTree.pageLimit) -> SearchResults {
        let needle = Array(query.trimmingSpaces.lowercased().utf8).filter { $0 != 0 }
        guard !needle.isEmpty else { return SearchResults(query: query, matches: [], offset: 0, limit: limit, total: 0) }
        let index = built
        var total = 0
        var page: [Int] = []
        needle.withUnsafeBytes { n in
            index.text.withUnsafeBytes { all in
                var start = 0
                for (i, end) in index.ends.enumerated() {
                    defer { start = end }
                    guard Self.contains(UnsafeRawBufferPointer(rebasing: all[start..<end]), n) else { continue }
                    if total >= offset && page.count < limit { page.append(i) }
                    total += 1
                }
            }
        }
        let nodes = page.map { i in
            let id = index.entityIDs[i]
            return tree.node(id, entry: index.declaredBy[i].flatMap { tree.host.subordinates(of: $0)[id] })
        }
        return SearchResults(query: query, matches: nodes, offset: min(offset, total), limit: limit, total: total)
    }
}

extension EntitySearch {
    /// Whether `needle` (not empty) occurs in `haystack`: `memchr` to the next candidate first
    /// byte, `memcmp` for the rest. (glibc's `memmem` is not visible to Swift without
    /// `_GNU_SOURCE`.)
    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer) -> Bool {
        guard let h = haystack.baseAddress, let n = needle.baseAddress, needle.count > 0, haystack.count >= needle.count else {
            return false
        }
        let first = Int32(needle[0])
        var at = 0
        let last = haystack.count - needle.count
        while at <= last {
            guard let hit = memchr(h + at, first, last - at + 1) else { return false }
            let position = h.distance(to: UnsafeRawPointer(hit))
            if memcmp(h + position, n, needle.count) == 0 { return true }
            at = position + 1
        }
        return false
    }
}

/// One page of search results.
public struct SearchResults: Sendable {
    public let query: String
    public let matches: [TreeNode]
    public let offset: Int
    public let limit: Int
    public let total: Int

    public var nextOffset: Int? { offset + limit < total ? offset + limit : nil }
    public var previousOffset: Int? { offset > 0 ? max(0, offset - limit) : nil }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks (no Foundation needed).
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
