import CBOR
import Cryptography
import JOSE
import JSON
import MDoc
import SDJWT
import Support

/// What the wallet answers one DCQL credential query with (OpenID4VP 1.0 §6): a credential of
/// the wallet file whose format and type match and that holds every requested claim (with one
/// of its `values`, §6.3), and exactly the disclosures or elements the query asks for.
public struct SelectedCredential {
    public enum Content {
        /// The SD-JWT VC cut to the requested disclosures (without KB-JWT yet) and its holder key.
        case sdJWT(SDJWT, HolderKey)
        /// The stored mdoc and the elements to present (nil: every element, `claims` absent).
        case mdoc(StoredMDoc, [String: Set<String>]?)
    }

    public let queryID: String
    public let content: Content
    /// `given_name`, `eu.europa.ec.eudi.pid.1/family_name`: what is disclosed, for `--verbose`.
    public let disclosed: [String]
}

/// The wallet's own reading of a DCQL query: only what selection needs, so a query this wallet
/// cannot answer exactly (`credential_sets`, `claim_sets`) is refused instead of half-answered.
public enum PresentationSelection {
    struct Claim {
        let path: [JSONValue]
        let values: [JSONValue]?
        var description: String { path.map { $0.stringValue ?? $0.intValue.map { "[\($0)]" } ?? "[*]" }.joined(separator: ".") }
    }

    /// One credential per credential query, or a usage error naming the query nothing held answers.
    public static func select(_ query: JSONValue, from wallet: TestWalletFile) throws -> [SelectedCredential] {
        try select(query, from: try WalletCredentials(wallet))
    }

    public static func select(_ query: JSONValue, from wallet: WalletCredentials) throws -> [SelectedCredential] {
        guard let object = query.objectValue, let credentials = object["credentials"]?.arrayValue, !credentials.isEmpty else {
            throw WalletError.verification("dcql_query.credentials must be a non-empty array (§6)")
        }
        if object["credential_sets"] != nil { throw WalletError.usage("dcql_query.credential_sets is not supported by this wallet") }
        return try credentials.map { try selectOne($0, wallet: wallet) }
    }

    static func selectOne(_ query: JSONValue, wallet: WalletCredentials) throws -> SelectedCredential {
        guard let id = query["id"]?.stringValue, let format = query["format"]?.stringValue else {
            throw WalletError.verification("a DCQL credential query needs id and format (§6.1)")
        }
        if query["claim_sets"] != nil { throw WalletError.usage("dcql_query.credentials[\(id)].claim_sets is not supported by this wallet") }
        let claims: [Claim]? = try query["claims"]?.arrayValue.map { list in
            try list.map { claim in
                guard let path = claim["path"]?.arrayValue, !path.isEmpty else { throw WalletError.verification("\(id): a claim without path (§6.3)") }
                return Claim(path: path, values: claim["values"]?.arrayValue)
            }
        }
        var reasons: [String] = []
        var held = 0
        func attempt(_ body: () throws -> SelectedCredential) rethrows -> SelectedCredential? {
            held += 1
            do { return try body() } catch let miss as SelectionMiss { reasons.append(miss.text) }
            return nil
        }
        switch format {
        case "dc+sd-jwt":
            let types = query["meta"]?["vct_values"]?.stringArray ?? []
            for entry in wallet.sdJWTs {
                if let found = try attempt({ try sdJWT(entry, id: id, types: types, claims: claims) }) { return found }
            }
        case "mso_mdoc":
            let docType = query["meta"]?["doctype_value"]?.stringValue
            for stored in wallet.mdocs {
                if let found = try attempt({ try mdoc(stored, id: id, docType: docType, claims: claims) }) { return found }
            }
        default: break
        }
        throw WalletError.usage("no credential in \(wallet.path) answers the query \(id) (\(format)): "
                                + (held == 0 ? "the wallet holds no \(format) credential" : reasons.joined(separator: "; ")))
    }

    struct SelectionMiss: Error { let text: String }

    static func sdJWT(_ entry: WalletCredentials.SDJWTEntry, id: String, types: [String], claims: [Claim]?) throws -> SelectedCredential {
        guard types.contains(entry.vct) else { throw SelectionMiss(text: "vct \(entry.vct) is not one of \(types)") }
        guard let claims else {
            return SelectedCredential(queryID: id, content: .sdJWT(entry.credential, entry.key),
                                      disclosed: entry.disclosed.map { $0.path.description })
        }
        for claim in claims {
            let found = select(claim.path, in: .object(entry.claims))
            guard !found.isEmpty else { throw SelectionMiss(text: "vct \(entry.vct) has no claim \(claim.description)") }
            if let values = claim.values, !found.allSatisfy({ values.contains($0) }) {
                throw SelectionMiss(text: "claim \(claim.description) of vct \(entry.vct) is not one of the requested values")
            }
        }
        let (presentation, kept) = entry.presentation { path in claims.contains { covers($0.path, path) } }
        return SelectedCredential(queryID: id, content: .sdJWT(presentation, entry.key), disclosed: kept)
    }

    static func mdoc(_ stored: StoredMDoc, id: String, docType: String?, claims: [Claim]?) throws -> SelectedCredential {
        guard docType == nil || stored.docType == docType else { throw SelectionMiss(text: "docType \(stored.docType) is not \(docType!)") }
        guard let claims else {
            let all = stored.issuerSigned.nameSpaces.flatMap { ns, items in items.map { "\(ns)/\($0.item.elementIdentifier)" } }
            return SelectedCredential(queryID: id, content: .mdoc(stored, nil), disclosed: all.sorted())
        }
        var selection: [String: Set<String>] = [:]
        for claim in claims {
            guard claim.path.count == 2, let ns = claim.path[0].stringValue, let element = claim.path[1].stringValue else {
                throw WalletError.verification("\(id): an mdoc claim path is [namespace, element] (§7.2)")
            }
            guard let item = stored.issuerSigned.nameSpaces[ns]?.first(where: { $0.item.elementIdentifier == element })?.item else {
                throw SelectionMiss(text: "docType \(stored.docType) has no element \(ns)/\(element)")
            }
            if let values = claim.values, !values.contains(json(item.elementValue)) {
                throw SelectionMiss(text: "element \(ns)/\(element) is not one of the requested values")
            }
            selection[ns, default: []].insert(element)
        }
        let disclosed = selection.flatMap { ns, elements in elements.map { "\(ns)/\($0)" } }.sorted()
        return SelectedCredential(queryID: id, content: .mdoc(stored, selection), disclosed: disclosed)
    }

    /// §7.1: a string selects a member, an integer an element, null every element.
    static func select(_ path: [JSONValue], in value: JSONValue) -> [JSONValue] {
        var current = [value]
        for element in path {
            current = current.flatMap { value -> [JSONValue] in
                switch (element, value) {
                case (.string(let name), .object(let object)): return object[name].map { [$0] } ?? []
                case (.int(let i), .array(let array)): return i >= 0 && i < array.count ? [array[Int(i)]] : []
                case (.null, .array(let array)): return array
                default: return []
                }
            }
        }
        return current
    }

    /// Whether a disclosure at `disclosed` lies on the way to or inside the requested `path`.
    static func covers(_ path: [JSONValue], _ disclosed: JSONPath) -> Bool {
        for (element, component) in zip(path, disclosed.components) {
            switch (element, component) {
            case (.string(let a), .member(let b)) where a == b: continue
            case (.int(let a), .index(let b)) where Int(a) == b: continue
            case (.null, .index): continue
            default: return false
            }
        }
        return true
    }

    /// The JSON a DCQL `values` entry can equal: text, integers, booleans (§6.3).
    static func json(_ value: CBORValue) -> JSONValue {
        switch value {
        case .text(let s): .string(s)
        case .unsigned(let n) where n <= UInt64(Int64.max): .int(Int64(n))
        case .negative(let n) where n < UInt64(Int64.max): .int(-1 - Int64(n))
        case .bool(let b): .bool(b)
        case .tagged(_, let inner): json(inner)
        default: .null
        }
    }
}
