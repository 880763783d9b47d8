import JSON

/// A Digital Credentials Query Language query (OpenID4VP 1.0 §6), decoded once with the path
/// of a bad member in the error. What this verifier cannot honour (`trusted_authorities`) is
/// refused when the request is made, so no wallet is asked something the verifier would then
/// check differently.
public struct DCQLQuery: Sendable, Equatable {
    public struct ClaimQuery: Sendable, Equatable {
        public let id: String?
        /// §7: strings select object members, integers array elements, null every element.
        public let path: [PathElement]
        /// §6.3: when present, the claim's value must be one of these.
        public let values: [JSONValue]?
    }

    public enum PathElement: Sendable, Equatable, CustomStringConvertible {
        case member(String)
        case index(Int)
        case all

        public var json: JSONValue {
            switch self {
            case .member(let name): .string(name)
            case .index(let i): .int(Int64(i))
            case .all: .null
            }
        }

        public var description: String {
            switch self {
            case .member(let name): name
            case .index(let i): "[\(i)]"
            case .all: "[*]"
            }
        }
    }

    public struct CredentialQuery: Sendable, Equatable {
        public let id: String
        /// `dc+sd-jwt` or `mso_mdoc`.
        public let format: String
        /// `meta.vct_values` (SD-JWT VC) or `[meta.doctype_value]` (mdoc).
        public let types: [String]
        /// nil: every claim of the credential is requested (§6.1, `claims` absent).
        public let claims: [ClaimQuery]?
        /// §6.1 `claim_sets`: options of claim ids, the wallet answering with one of them (the
        /// first it can, by preference). nil: every claim of `claims` is requested.
        public let claimSets: [[String]]?
        public let multiple: Bool

        /// What an answer may disclose: one list of claims per acceptable option, in the
        /// query's order of preference (one list, `claims` itself, without `claim_sets`).
        public var claimOptions: [[ClaimQuery]]? {
            guard let claims else { return nil }
            guard let claimSets else { return [claims] }
            return claimSets.map { set in claims.filter { claim in claim.id.map(set.contains) ?? false } }
        }
    }

    /// §6.2: one of `options` (each a list of credential query ids) must be answered when the
    /// set is `required`.
    public struct CredentialSet: Sendable, Equatable {
        public let options: [[String]]
        public let required: Bool
    }

    public let credentials: [CredentialQuery]
    /// nil: every credential query must be answered (§6.4.2).
    public let credentialSets: [CredentialSet]?
    /// The query as received, for the request object.
    public let json: JSONValue

    public static let formats: Set<String> = ["dc+sd-jwt", "mso_mdoc"]

    public static func parse(_ value: JSONValue) throws(JSONReadError) -> DCQLQuery {
        let reader = try JSONReader(value, path: JSONPath("dcql_query"))
        try reader.rejectUnknown(allowed: ["credentials", "credential_sets"])
        var credentials: [CredentialQuery] = []
        for field in try reader.array("credentials", nonEmpty: true) {
            let c = try field.object()
            try c.rejectUnknown(allowed: ["id", "format", "meta", "claims", "multiple", "claim_sets", "require_cryptographic_holder_binding",
                                          "trusted_authorities"])
            if c.contains("trusted_authorities") {
                throw c.invalid("trusted_authorities", "trusted_authorities is not supported by this verifier")
            }
            if let binding = try c.optionalBool("require_cryptographic_holder_binding"), !binding {
                throw c.invalid("require_cryptographic_holder_binding", "this verifier always requires holder binding")
            }
            let id = try c.nonEmptyString("id")
            guard id.utf8.allSatisfy({ isIDCharacter($0) }) else {
                throw c.invalid("id", "only letters, digits, '_' and '-' (§6.1)")
            }
            guard !credentials.contains(where: { $0.id == id }) else { throw c.invalid("id", "\(id) is used twice") }
            let format = try c.string("format")
            guard formats.contains(format) else {
                throw c.invalid("format", "expected dc+sd-jwt or mso_mdoc")
            }
            let meta = try c.object("meta")
            let types: [String]
            if format == "dc+sd-jwt" {
                try meta.rejectUnknown(allowed: ["vct_values"])
                types = try meta.stringArray("vct_values", nonEmpty: true)
            } else {
                try meta.rejectUnknown(allowed: ["doctype_value"])
                types = [try meta.nonEmptyString("doctype_value")]
            }
            var claims: [ClaimQuery]?
            if let fields = try c.optionalArray("claims", nonEmpty: true) {
                claims = []
                for claimField in fields {
                    let q = try claimField.object()
                    try q.rejectUnknown(allowed: ["id", "path", "values", "intent_to_retain"])
                    var path: [PathElement] = []
                    for element in try q.array("path", nonEmpty: true) {
                        switch element.value {
                        case .string(let name): path.append(.member(name))
                        case .int(let i) where i >= 0: path.append(.index(Int(i)))
                        case .null: path.append(.all)
                        default: throw element.invalid("a path element is a string, a non-negative integer or null (§7)")
                        }
                    }
                    if format == "mso_mdoc", path.count != 2 || path.contains(where: { if case .member = $0 { false } else { true } }) {
                        throw q.invalid("path", "an mdoc claim path is [namespace, element identifier] (§7.2)")
                    }
                    let values = try q.optionalArray("values", nonEmpty: true)?.map(\.value)
                    claims?.append(ClaimQuery(id: try q.optionalString("id"), path: path, values: values))
                }
            }
            let claimSets = try parseClaimSets(c, claims: claims)
            credentials.append(CredentialQuery(id: id, format: format, types: types, claims: claims, claimSets: claimSets,
                                               multiple: try c.optionalBool("multiple") ?? false))
        }
        let sets = try parseCredentialSets(reader, ids: Set(credentials.map(\.id)))
        return DCQLQuery(credentials: credentials, credentialSets: sets, json: value)
    }

    /// §6.1: `claim_sets` needs `claims`, and names claims by their ids, which must then be
    /// present and unique.
    private static func parseClaimSets(_ c: JSONReader, claims: [ClaimQuery]?) throws(JSONReadError) -> [[String]]? {
        guard let fields = try c.optionalArray("claim_sets", nonEmpty: true) else { return nil }
        guard let claims else { throw c.invalid("claim_sets", "claim_sets needs claims (§6.1)") }
        let ids = claims.compactMap(\.id)
        guard Set(ids).count == ids.count else { throw c.invalid("claims", "claim ids must be unique (§6.3)") }
        var sets: [[String]] = []
        for field in fields {
            let option = try field.stringArray(nonEmpty: true)
            guard let unknown = option.first(where: { !ids.contains($0) }) else { sets.append(option); continue }
            throw field.invalid("\(unknown) is not the id of a claim of this credential query")
        }
        return sets
    }

    /// §6.2: `credential_sets`, each with non-empty `options` naming credential query ids.
    private static func parseCredentialSets(_ reader: JSONReader, ids: Set<String>) throws(JSONReadError) -> [CredentialSet]? {
        guard let fields = try reader.optionalArray("credential_sets", nonEmpty: true) else { return nil }
        var sets: [CredentialSet] = []
        for field in fields {
            let set = try field.object()
            try set.rejectUnknown(allowed: ["options", "required", "purpose"])
            var options: [[String]] = []
            for optionField in try set.array("options", nonEmpty: true) {
                let option = try optionField.stringArray(nonEmpty: true)
                if let unknown = option.first(where: { !ids.contains($0) }) {
                    throw optionField.invalid("\(unknown) is not the id of a credential query")
                }
                options.append(option)
            }
            sets.append(CredentialSet(options: options, required: try set.optionalBool("required") ?? true))
        }
        return sets
    }

    private static func isIDCharacter(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x2D
    }
}

extension DCQLQuery.ClaimQuery {
    /// `given_name`, `address.country`, `nationalities[*]`.
    public var pathDescription: String {
        path.enumerated().map { i, e in
            if case .member(let name) = e { return i == 0 ? name : "." + name }
            return e.description
        }.joined()
    }
}
