import Federation
import Foundation
import JSON

/// Everything declared in `Entities/`: reads and validates every file, turns entity names into
/// entity IDs and fills the `{entity_id}` / `{base_url}` placeholders in string values.
public struct EntityCatalog: Sendable {
    public let entities: [HostedEntity]
    public let baseURL: String

    /// Entity name → entity ID.
    public var idsByName: [String: String] { Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.entityID) }) }

    public static func load(directory: String, baseURL: String) throws(EntityFileError) -> EntityCatalog {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        let fm = FileManager.default
        let names: [String]
        do { names = try fm.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted() } catch {
            throw EntityFileError(file: directory, field: nil, "cannot read the entities directory: \(error.localizedDescription)")
        }
        guard !names.isEmpty else { throw EntityFileError(file: directory, field: nil, "holds no entity files (*.json)") }

        var files: [EntityFile] = []
        for fileName in names {
            let path = (directory as NSString).appendingPathComponent(fileName)
            let name = String(fileName.dropLast(".json".count))
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
                throw EntityFileError(file: path, field: nil, "an entity name may only hold letters, digits, '-', '_' and '.'")
            }
            guard let data = fm.contents(atPath: path) else { throw EntityFileError(file: path, field: nil, "cannot be read") }
            let json: JSONValue
            do { json = try JSONValue.parse(Array(data)) } catch {
                throw EntityFileError(file: path, field: nil, "is not valid JSON: \(error)")
            }
            files.append(try EntityFile(name: name, file: path, json: json))
        }
        return try assemble(files, baseURL: base)
    }

    static func assemble(_ files: [EntityFile], baseURL: String) throws(EntityFileError) -> EntityCatalog {
        var ids: [String: String] = [:]
        for f in files { ids[f.name] = f.entityID ?? "\(baseURL)/\(f.name)" }
        var seen: [String: String] = [:]
        for f in files {
            if let other = seen.updateValue(f.file, forKey: ids[f.name]!) {
                throw EntityFileError(file: f.file, field: "entity_id", "the same entity ID as \(other)")
            }
        }

        var entities: [HostedEntity] = []
        for f in files {
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
                if ids.values.contains(target) == false && s.jwks == nil {
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
            entities.append(HostedEntity(
                name: f.name, entityID: id, isTrustAnchor: f.trustAnchor, authorityHints: hints,
                metadata: f.metadata.mapValues(fill), subordinateDefaults: substitute(f.subordinateStatement, id, baseURL),
                subordinates: subordinates, trustMarkIssuers: tmIssuers, trustMarkOwners: tmOwners,
                trustMarksIssued: issued, lifetime: f.lifetime, signingAlgorithm: f.signingAlgorithm))
        }
        try checkNoLocalLoops(entities, files: files)
        return EntityCatalog(entities: entities, baseURL: baseURL)
    }

    /// A loop among local `authority_hints` can never reach a trust anchor; refuse it at start-up.
    static func checkNoLocalLoops(_ entities: [HostedEntity], files: [EntityFile]) throws(EntityFileError) {
        let byID = Dictionary(uniqueKeysWithValues: entities.map { ($0.entityID, $0) })
        for (e, f) in zip(entities, files) {
            var stack = e.authorityHints.map { ($0, [e.entityID]) }
            var steps = 0
            while let (id, path) = stack.popLast(), steps < 10_000 {
                steps += 1
                if id == e.entityID {
                    throw EntityFileError(file: f.file, field: "authority_hints", "loop: \((path + [id]).joined(separator: " → "))")
                }
                guard let next = byID[id], !path.contains(id) else { continue }
                stack += next.authorityHints.map { ($0, path + [id]) }
            }
        }
    }

    static func substitute(_ value: JSONValue, entityID: String, baseURL: String) -> JSONValue {
        switch value {
        case .string(let s) where s.contains("{"):
            return .string(s.replacingOccurrences(of: "{entity_id}", with: entityID).replacingOccurrences(of: "{base_url}", with: baseURL))
        case .array(let a): return .array(a.map { substitute($0, entityID: entityID, baseURL: baseURL) })
        case .object(let o): return .object(o.mapValues { substitute($0, entityID: entityID, baseURL: baseURL) })
        default: return value
        }
    }

    private static func substitute(_ p: SubordinatePolicy, _ id: String, _ base: String) -> SubordinatePolicy {
        let f = { (v: JSONValue) in substitute(v, entityID: id, baseURL: base) }
        return SubordinatePolicy(metadataPolicy: p.metadataPolicy.map(f), metadataPolicyCrit: p.metadataPolicyCrit,
                                 metadata: p.metadata.map(f), constraints: p.constraints)
    }
}
