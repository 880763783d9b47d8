import JSON

/// Filters of the `list` endpoint (section 8.2.1).
public struct SubordinateListFilter: Sendable, Equatable {
    public var entityTypes: [String] = []
    public var trustMarked: Bool = false
    public var trustMarkType: String?
    public var intermediate: Bool = false
    public init(entityTypes: [String] = [], trustMarked: Bool = false, trustMarkType: String? = nil, intermediate: Bool = false) {
        self.entityTypes = entityTypes
        self.trustMarked = trustMarked
        self.trustMarkType = trustMarkType
        self.intermediate = intermediate
    }
}

extension FederationHost {
    /// Immediate subordinates of `superiorID` that pass every filter, sorted for stable output.
    public func listSubordinates(of superiorID: String, filter: SubordinateListFilter) throws(FederationError) -> [String] {
        guard isSuperior(superiorID) else { throw .notFound("no superior \(superiorID) here") }
        return subordinates(of: superiorID).values.filter { entry in
            if !filter.entityTypes.isEmpty {
                let types = entityTypes(of: entry)
                if !filter.entityTypes.contains(where: types.contains) { return false }
            }
            if filter.intermediate && !isIntermediate(entry) { return false }
            if filter.trustMarked || filter.trustMarkType != nil {
                let marks = trustMarkEntries(for: entry.entityID)
                if filter.trustMarked && marks.isEmpty { return false }
                if let t = filter.trustMarkType, !marks.contains(where: { $0.trustMarkType == t }) { return false }
            }
            return true
        }.map(\.entityID).sorted()
    }

    /// Entity types of a subordinate: the metadata keys for a local one, the declared list for a remote one.
    func entityTypes(of entry: SubordinateEntry) -> Set<String> {
        if let local = entities[entry.entityID] { return Set(publishedMetadata(of: local).keys) }
        return Set(entry.entityTypes ?? [])
    }

    /// A subordinate is an intermediate when it has subordinates of its own.
    func isIntermediate(_ entry: SubordinateEntry) -> Bool {
        if entities[entry.entityID] != nil { return subordinatesBySuperior[entry.entityID] != nil }
        return false
    }
}
