import JSON

/// A Digital Credentials Query Language query (OpenID4VP 1.0 §6), decoded once with the path
/// of a bad member in the error. What this verifier cannot honour (`credential_sets`,
/// `claim_sets`, `trusted_authorities`) is refused when the request is made, so no wallet is
/// asked something the verifier would then check differently.
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
        public let multiple: Bool
    }

    public let credentials: [CredentialQuery]
    /// The query as received, for the request object.
    public let json: JSONValue

    public static let formats: Set<String> = ["dc+sd-jwt", "mso_mdoc"]

    public static func parse(_ value: JSONValue) throws(JSONReadError) -> DCQLQuery {
        let reader = try JSONReader(value, path: JSONPath("dcql_query"))
        try reader.rejectUnknown(allowed: ["credentials", "credential_sets"])
        if reader.contains("credential_sets") { throw reader.invalid("credential_sets", "credential_sets is not supported by this verifier") }
        var credentials: [CredentialQuery] = []
        for field in try reader.array("credentials", nonEmpty: true) {
            let c = try field.object()
            try c.rejectUnknown(allowed: ["id", "format", "meta", "claims", "multiple", "claim_sets", "require_cryptographic_holder_binding",
                                          "trusted_authorities"])
            for unsupported in ["claim_sets", "trusted_authorities"] where c.contains(unsupported) {
                throw c.invalid(unsupported, "\(unsupported) is not supported by this verifier")
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
            credentials.append(CredentialQuery(id: id, format: format, types: types, claims: claims,
                                               multiple: try c.optionalBool("multiple") ?? false))
        }
        return DCQLQuery(credentials: credentials, json: value)
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
