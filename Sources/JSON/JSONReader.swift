/// Typed reading of a JSON object that names the exact place of a bad field, so a protocol
/// message is decoded once into a struct and every error says what was wrong and where:
///
///     let r = try JSONReader(value)
///     let name = try r.object("metadata").object("openid_relying_party").string("client_name")
///     // throws "metadata.openid_relying_party.client_name: expected a string, found number"
///
/// `x(_:)` requires the member; `optionalX(_:)` returns nil only when the member is absent. An
/// explicit `null` is never taken for "absent": it is a type error like any other, because
/// confusing the two is a classic interoperability bug (OpenID Federation 1.0 section 5 forbids
/// null metadata values for that reason).
public struct JSONReader: Sendable {
    public let object: [String: JSONValue]
    public let path: JSONPath

    public init(_ object: [String: JSONValue], path: JSONPath = .root) {
        self.object = object
        self.path = path
    }

    /// Reads `value`, which must be an object.
    public init(_ value: JSONValue, path: JSONPath = .root) throws(JSONReadError) {
        self = try JSONField(value, path: path).object()
    }

    public subscript(name: String) -> JSONValue? { object[name] }
    public func contains(_ name: String) -> Bool { object[name] != nil }
    public var isEmpty: Bool { object.isEmpty }

    /// The member as a field to read further, or `.missing`.
    public func field(_ name: String) throws(JSONReadError) -> JSONField {
        guard let v = object[name] else { throw JSONReadError(path: path.appending(name), problem: .missing) }
        return JSONField(v, in: path, at: .member(name))
    }

    public func optionalField(_ name: String) -> JSONField? {
        object[name].map { JSONField($0, in: path, at: .member(name)) }
    }

    /// Every member, sorted by name so that of several bad members the same one is reported.
    public var members: [(name: String, field: JSONField)] {
        object.keys.sorted().map { ($0, JSONField(object[$0]!, in: path, at: .member($0))) }
    }

    /// An error about member `name` (present or not) that the caller's own check found.
    public func invalid(_ name: String, _ why: String) -> JSONReadError {
        JSONReadError(path: path.appending(name), problem: .invalid(why))
    }

    /// Fails on the first member (by name) outside `allowed`: for formats where a typo must
    /// not silently do nothing.
    public func rejectUnknown(allowed: Set<String>) throws(JSONReadError) {
        if let unknown = object.keys.filter({ !allowed.contains($0) }).sorted().first {
            throw invalid(unknown, "is not a known member")
        }
    }

    public func string(_ name: String) throws(JSONReadError) -> String { try field(name).string() }
    public func optionalString(_ name: String) throws(JSONReadError) -> String? { try optionalField(name)?.string() }
    public func nonEmptyString(_ name: String) throws(JSONReadError) -> String { try field(name).nonEmptyString() }
    public func int(_ name: String) throws(JSONReadError) -> Int64 { try field(name).int() }
    public func optionalInt(_ name: String) throws(JSONReadError) -> Int64? { try optionalField(name)?.int() }
    public func double(_ name: String) throws(JSONReadError) -> Double { try field(name).double() }
    public func optionalDouble(_ name: String) throws(JSONReadError) -> Double? { try optionalField(name)?.double() }
    public func bool(_ name: String) throws(JSONReadError) -> Bool { try field(name).bool() }
    public func optionalBool(_ name: String) throws(JSONReadError) -> Bool? { try optionalField(name)?.bool() }
    public func object(_ name: String) throws(JSONReadError) -> JSONReader { try field(name).object() }
    public func optionalObject(_ name: String) throws(JSONReadError) -> JSONReader? { try optionalField(name)?.object() }
    public func array(_ name: String, nonEmpty: Bool = false) throws(JSONReadError) -> [JSONField] {
        try field(name).array(nonEmpty: nonEmpty)
    }
    public func optionalArray(_ name: String, nonEmpty: Bool = false) throws(JSONReadError) -> [JSONField]? {
        try optionalField(name)?.array(nonEmpty: nonEmpty)
    }
    public func stringArray(_ name: String, nonEmpty: Bool = false) throws(JSONReadError) -> [String] {
        try field(name).stringArray(nonEmpty: nonEmpty)
    }
    public func optionalStringArray(_ name: String, nonEmpty: Bool = false) throws(JSONReadError) -> [String]? {
        try optionalField(name)?.stringArray(nonEmpty: nonEmpty)
    }
    public func url(_ name: String, _ rule: JSONField.URLRule = .httpOrHTTPS) throws(JSONReadError) -> String {
        try field(name).url(rule)
    }
    public func optionalURL(_ name: String, _ rule: JSONField.URLRule = .httpOrHTTPS) throws(JSONReadError) -> String? {
        try optionalField(name)?.url(rule)
    }
}

/// One JSON value and where it is, read with the same typed accessors as `JSONReader`.
public struct JSONField: Sendable {
    public let value: JSONValue
    /// Where the value is: the container's path and, for a member or element, its name or
    /// index, appended only when `path` is asked for (an error, or reading further down).
    /// Appending on every read would allocate a path per field, and a cold resolve reads back
    /// the claims of every statement it signs.
    private let container: JSONPath
    private let last: JSONPath.Component?

    public var path: JSONPath { last.map { container.appending($0) } ?? container }

    public init(_ value: JSONValue, path: JSONPath) {
        self.value = value
        container = path
        last = nil
    }

    init(_ value: JSONValue, in container: JSONPath, at last: JSONPath.Component) {
        self.value = value
        self.container = container
        self.last = last
    }

    /// An error about this value that the caller's own check found.
    public func invalid(_ why: String) -> JSONReadError { JSONReadError(path: path, problem: .invalid(why)) }

    private func wrongType(_ expected: String) -> JSONReadError {
        JSONReadError(path: path, problem: .wrongType(expected: expected, found: value.typeName))
    }

    public func string() throws(JSONReadError) -> String {
        guard case .string(let s) = value else { throw wrongType("a string") }
        return s
    }

    public func nonEmptyString() throws(JSONReadError) -> String {
        let s = try string()
        guard !s.isEmpty else { throw invalid("must not be empty") }
        return s
    }

    /// An integer; a float with no fractional part counts (some encoders write `1.7e9`).
    public func int() throws(JSONReadError) -> Int64 {
        guard let i = value.intValue else {
            if case .double = value { throw invalid("expected an integer, found a fraction") }
            throw wrongType("an integer")
        }
        return i
    }

    public func double() throws(JSONReadError) -> Double {
        guard let d = value.doubleValue else { throw wrongType("a number") }
        return d
    }

    public func bool() throws(JSONReadError) -> Bool {
        guard case .bool(let b) = value else { throw wrongType("a boolean") }
        return b
    }

    public func object() throws(JSONReadError) -> JSONReader {
        guard case .object(let o) = value else { throw wrongType("an object") }
        return JSONReader(o, path: path)
    }

    /// The elements, each with its index in the path (`authority_hints[2]`).
    public func array(nonEmpty: Bool = false) throws(JSONReadError) -> [JSONField] {
        guard case .array(let a) = value else { throw wrongType("an array") }
        if nonEmpty && a.isEmpty { throw invalid("must not be an empty array") }
        let path = self.path
        return a.enumerated().map { JSONField($1, in: path, at: .index($0)) }
    }

    public func stringArray(nonEmpty: Bool = false) throws(JSONReadError) -> [String] {
        var out: [String] = []
        for element in try array(nonEmpty: nonEmpty) { out.append(try element.string()) }
        return out
    }

    /// Which absolute URLs `url(_:)` accepts.
    public enum URLRule: Sendable {
        /// `http` or `https`, with a host.
        case httpOrHTTPS
        /// `https` only, with a host.
        case https
        /// `http` or `https`, with a host and no query or fragment: the shape of an OpenID
        /// Federation Entity Identifier (section 1.2), `http` allowed for local test federations.
        case identifier
    }

    /// An absolute URL string, returned unchanged: scheme, `://`, a non-empty host (optional port
    /// of digits), no whitespace, control characters or characters RFC 3986 never allows.
    public func url(_ rule: URLRule = .httpOrHTTPS) throws(JSONReadError) -> String {
        let s = try string()
        if let why = URLShape.problem(s, rule: rule) { throw invalid(why) }
        return s
    }
}

/// The syntactic URL check behind `JSONField.url`, without Foundation (the JSON target has no
/// dependencies and Foundation's `URL` accepts far more than a protocol message should).
enum URLShape {
    static func problem(_ s: String, rule: JSONField.URLRule) -> String? {
        let bytes = Array(s.utf8)
        for b in bytes where b <= 0x20 || b == 0x7F || b == UInt8(ascii: "<") || b == UInt8(ascii: ">")
            || b == UInt8(ascii: "\"") || b == UInt8(ascii: "{") || b == UInt8(ascii: "}") || b == UInt8(ascii: "|")
            || b == UInt8(ascii: "\\") || b == UInt8(ascii: "^") || b == UInt8(ascii: "`") {
            return "is not a valid URL (contains a space, control or disallowed character)"
        }
        guard let sep = s.firstRange(of: "://") else { return "is not an absolute URL" }
        let scheme = s[..<sep.lowerBound].lowercased()
        switch rule {
        case .https where scheme != "https": return "must be an https URL"
        case .httpOrHTTPS, .identifier:
            if scheme != "https" && scheme != "http" { return "must be an http or https URL" }
        default: break
        }
        let rest = s[sep.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            if rule == .identifier { return "must not contain user information" }
            authority = authority[authority.index(after: at)...]
        }
        var host = authority
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return "has an unterminated IP literal" }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty && !(after.hasPrefix(":") && isPort(after.dropFirst())) { return "has an invalid port" }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            if !isPort(authority[authority.index(after: colon)...]) { return "has an invalid port" }
        }
        if host.isEmpty || host == "[]" { return "has no host" }
        if rule == .identifier && (s.contains("?") || s.contains("#")) {
            return "must not contain a query or fragment"
        }
        return nil
    }

    private static func isPort(_ p: Substring) -> Bool {
        !p.isEmpty && p.count <= 5 && p.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }
}
