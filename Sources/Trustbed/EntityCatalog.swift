import Federation
import JSON

/// Everything declared in `Entities/`: reads and validates every file, turns entity names into
/// entity IDs and fills the `{entity_id}` / `{base_url}` placeholders in string values.
public struct EntityCatalog: Sendable {
    public let entities: [HostedEntity]
    public let baseURL: String

    /// Entity name → entity ID.
    public var idsByName: [String: String] { Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.entityID) }) }

    /// What a reload may reuse of this load; pass it back to `load(reusing:)`.
    public let sources: EntitySources

    /// Reads every `*.json` file of `directory` (in parallel) and assembles the catalog. With
    /// `reusing`, a file whose size, modification time and inode are unchanged since that load is
    /// not read again and its entity is kept as built. The first bad file in name order stops the
    /// load, naming file and field.
    public static func load(directory: String, baseURL: String, reusing previous: EntitySources? = nil) throws(EntityFileError) -> EntityCatalog {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        let names = try EntityDirectory.fileNames(directory)
        guard !names.isEmpty else { throw EntityFileError(file: directory, field: nil, "holds no entity files (*.json)") }
        var parsed = 0
        // `names` is sorted, so the sources (and entities) keep name order.
        var items = try EntityDirectory.readAll(prefix, names: names, previous: previous?.byFileName(baseURL: base) ?? [:], parsed: &parsed)
        let ids = entityIDs(items.map(\.source), baseURL: base)

        // A kept entity holds entity IDs its file named; when a name it may have named now means
        // another ID (or nothing), its file is parsed again so it fails or resolves exactly as
        // on a fresh start. Entities added meanwhile change no earlier resolution.
        if let previous {
            let gone = Set(previous.entities.lazy.filter { ids[$0.name] != $0.entityID }.map(\.entityID))
            let stale = gone.isEmpty ? [] : items.indices.filter { i in
                guard case .reused(let e) = items[i].source else { return false }
                return e.referencedEntityIDs.contains(where: gone.contains)
            }
            if !stale.isEmpty {
                let again = try EntityDirectory.readAll(prefix, names: stale.map { names[$0] }, previous: [:], parsed: &parsed)
                for (i, item) in zip(stale, again) { items[i] = item }
            }
        }
        let entities = try assemble(items.map(\.source), ids: ids, baseURL: base, path: { prefix + $0 + ".json" })
        let sources = EntitySources(entities: entities, stamps: items.map(\.stamp), baseURL: base, parsedCount: parsed)
        items = []
        EntityDirectory.releaseFreedMemory()
        return EntityCatalog(entities: entities, baseURL: base, sources: sources)
    }

    /// Entity name → entity ID.
    private static func entityIDs(_ sources: [EntitySource], baseURL: String) -> [String: String] {
        var ids: [String: String] = [:]
        ids.reserveCapacity(sources.count)
        for s in sources {
            switch s {
            case .reused(let e): ids[e.name] = e.entityID
            case .parsed(let f): ids[f.name] = f.entityID ?? "\(baseURL)/\(f.name)"
            }
        }
        return ids
    }

    /// Checks the sources against each other and builds the entities; `path` gives the file
    /// of an entity name, for errors.
    private static func assemble(_ sources: [EntitySource], ids: [String: String], baseURL: String,
                                 path: (String) -> String) throws(EntityFileError) -> [HostedEntity] {
        var seen: [String: String] = [:]
        seen.reserveCapacity(sources.count)
        for s in sources {
            if let other = seen.updateValue(s.name, forKey: ids[s.name]!) {
                throw EntityFileError(file: path(s.name), field: "entity_id", "the same entity ID as \(path(other))")
            }
        }

        let hostedIDs = Set(ids.values)
        // Each entity depends only on the name → ID map, so they are built in parallel; the
        // first error in name order wins, as in a sequential pass.
        let built = EntityDirectory.parallelMap(sources.count) { i -> Result<HostedEntity, EntityFileError> in
            switch sources[i] {
            case .reused(let e): return .success(e)
            case .parsed(let f):
                do throws(EntityFileError) {
                    return .success(try hosted(f, ids: ids, hostedIDs: hostedIDs, baseURL: baseURL))
                } catch {
                    return .failure(error)
                }
            }
        }
        var entities: [HostedEntity] = []
        entities.reserveCapacity(sources.count)
        for r in built {
            switch r {
            case .success(let e): entities.append(e)
            case .failure(let error): throw error
            }
        }
        try checkNoLocalLoops(entities, file: { path($0.name) })
        return entities
    }

    /// One file's entity with names resolved to entity IDs and placeholders filled.
    private static func hosted(_ f: EntityFile, ids: [String: String], hostedIDs: Set<String>, baseURL: String) throws(EntityFileError) -> HostedEntity {
        let id = ids[f.name]!
        func resolve(_ ref: String, _ field: String) throws(EntityFileError) -> String {
            if ref.hasPrefix("https://") || ref.hasPrefix("http://") { return ref }
            guard let local = ids[ref] else {
                throw EntityFileError(file: f.file, field: field, "\"\(ref)\" is neither an entity in this directory nor an absolute entity ID")
            }
            return local
        }
        let fill = { (v: JSONValue) in Self.substitute(v, entityID: id, baseURL: baseURL) }

        var hints: [String] = []
        for h in f.authorityHints {
            let target = try resolve(h, "authority_hints")
            if target == id { throw EntityFileError(file: f.file, field: "authority_hints", "an entity cannot be its own authority") }
            hints.append(target)
        }
        var subordinates: [String: SubordinateEntry] = [:]
        for s in f.subordinates {
            let target = try resolve(s.key, "subordinates.\(s.key)")
            if !hostedIDs.contains(target) && s.jwks == nil {
                throw EntityFileError(file: f.file, field: "subordinates.\(s.key).jwks", "is required for a subordinate this server does not host")
            }
            subordinates[target] = SubordinateEntry(entityID: target, policy: substitute(s.policy, id, baseURL), jwks: s.jwks, entityTypes: s.entityTypes)
        }
        var tmIssuers: [String: [String]] = [:]
        for (type, issuers) in f.trustMarkIssuers {
            var out: [String] = []
            for i in issuers { out.append(try resolve(i, "trust_mark_issuers.\(type)")) }
            tmIssuers[type] = out
        }
        var tmOwners: [String: String] = [:]
        for (type, owner) in f.trustMarkOwners { tmOwners[type] = try resolve(owner, "trust_mark_owners.\(type)") }
        var issued: [TrustMarkIssuance] = []
        for (i, t) in f.trustMarksIssued.enumerated() {
            var subjects: [String] = []
            for s in t.subjects { subjects.append(try resolve(s, "trust_marks_issued[\(i)].subjects")) }
            issued.append(TrustMarkIssuance(
                trustMarkType: t.type, subjects: subjects, lifetime: t.lifetime,
                logoURI: t.logoURI.map { fill(.string($0)).stringValue ?? $0 },
                ref: t.ref.map { fill(.string($0)).stringValue ?? $0 }))
        }
        return HostedEntity(
            name: f.name, entityID: id, isTrustAnchor: f.trustAnchor, authorityHints: hints,
            metadata: f.metadata.mapValues(fill), subordinateDefaults: substitute(f.subordinateStatement, id, baseURL),
            subordinates: subordinates, trustMarkIssuers: tmIssuers, trustMarkOwners: tmOwners,
            trustMarksIssued: issued, lifetime: f.lifetime, signingAlgorithm: f.signingAlgorithm,
            services: f.services.mapValues(fill))
    }

    static func substitute(_ value: JSONValue, entityID: String, baseURL: String) -> JSONValue {
        switch value {
        case .string(let s):
            return fillPlaceholders(s, entityID: entityID, baseURL: baseURL).map(JSONValue.string) ?? value
        case .array(let a): return .array(a.map { substitute($0, entityID: entityID, baseURL: baseURL) })
        case .object(let o): return .object(o.mapValues { substitute($0, entityID: entityID, baseURL: baseURL) })
        default: return value
        }
    }

    /// `s` with `{entity_id}` and `{base_url}` filled in, or nil when it holds neither. A byte
    /// scan, not the generic string search, which was a large part of loading 100,000 entities
    /// (measured: see docs/performance.md).
    static func fillPlaceholders(_ s: String, entityID: String, baseURL: String) -> String? {
        let bytes = s.utf8
        guard bytes.contains(UInt8(ascii: "{")) else { return nil }
        let a = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(a.count + entityID.utf8.count)
        var i = 0, replaced = false
        while i < a.count {
            if a[i] == UInt8(ascii: "{") {
                if let (name, value) = [(Self.entityIDPlaceholder, entityID), (Self.baseURLPlaceholder, baseURL)]
                    .first(where: { a[i...].starts(with: $0.0) }) {
                    out.append(contentsOf: value.utf8)
                    i += name.count
                    replaced = true
                    continue
                }
            }
            out.append(a[i])
            i += 1
        }
        return replaced ? String(decoding: out, as: UTF8.self) : nil
    }

    private static let entityIDPlaceholder = Array("{entity_id}".utf8)
    private static let baseURLPlaceholder = Array("{base_url}".utf8)

    private static func substitute(_ p: SubordinatePolicy, _ id: String, _ base: String) -> SubordinatePolicy {
        let f = { (v: JSONValue) in substitute(v, entityID: id, baseURL: base) }
        return SubordinatePolicy(metadataPolicy: p.metadataPolicy.map(f), metadataPolicyCrit: p.metadataPolicyCrit,
                                 metadata: p.metadata.map(f), constraints: p.constraints)
    }
}
