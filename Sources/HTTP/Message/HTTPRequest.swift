import Support
/// One HTTP request as handlers see it: fully received, path decoded, header names lower-cased.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// Percent-decoded path, without the query.
    public var path: String
    /// The query exactly as received (no leading `?`), nil when the URL had no `?`.
    public var rawQuery: String?
    /// Decoded query parameters (`+` as space), in order, repeated names kept.
    public var query: [(name: String, value: String)]
    /// Header fields by lower-cased name; repeated fields are joined with ", " (RFC 9110 §5.3).
    /// Read-only so that the names stay lower-cased and `header(_:)` needs one lookup.
    public private(set) var headers: [String: String]
    public var body: [UInt8]
    public var remoteAddress: String

    public init(
        method: HTTPMethod, path: String, rawQuery: String? = nil, headers: [String: String] = [:],
        body: [UInt8] = [], remoteAddress: String = ""
    ) {
        var normalized = headers
        if headers.keys.contains(where: ASCII.hasUppercase) {
            normalized = [:]
            for (name, value) in headers { normalized[ASCII.lowercased(name), default: ""].appendField(value) }
        }
        self.init(
            trustedMethod: method, path: path, rawQuery: rawQuery, lowercasedHeaders: normalized,
            body: body, remoteAddress: remoteAddress)
    }

    /// For the server, whose header names are already lower-cased.
    init(
        trustedMethod method: HTTPMethod, path: String, rawQuery: String?, lowercasedHeaders: [String: String],
        body: [UInt8], remoteAddress: String
    ) {
        self.method = method
        self.path = path
        self.rawQuery = rawQuery
        self.query = rawQuery.map { URLEncoding.pairs($0) } ?? []
        self.headers = lowercasedHeaders
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// Header value by case-insensitive name.
    public func header(_ name: String) -> String? {
        if let value = headers[name] { return value }
        return ASCII.hasUppercase(name) ? headers[ASCII.lowercased(name)] : nil
    }

    /// All values of a query parameter, in order.
    public func queryValues(_ name: String) -> [String] {
        query.compactMap { $0.name == name ? $0.value : nil }
    }

    public var queryNames: Set<String> { Set(query.map(\.name)) }

    /// The query parameters, with the "exactly once" / "at most once" checks of `Parameters`;
    /// their `ParameterError` renders as 400 `invalid_request` when a handler throws it.
    public var parameters: Parameters { Parameters(pairs: query) }

    /// The client reached us over https: `X-Forwarded-Proto` (first value) says so. The server
    /// itself speaks plain HTTP; TLS ends at the proxy in front of it (Deploy/).
    public var isSecure: Bool {
        guard let proto = header("x-forwarded-proto") else { return false }
        return ASCII.equalsIgnoringCase(String(HTTPRequest.firstValue(proto)), "https")
    }

    /// The first of a comma-separated list of forwarded values, trimmed (each proxy appends its
    /// own, so the first is what the client used).
    static func firstValue(_ header: String) -> Substring {
        var value = header[...]
        if let comma = value.firstIndex(of: ",") { value = value[..<comma] }
        while value.first == " " || value.first == "\t" { value.removeFirst() }
        while value.last == " " || value.last == "\t" { value.removeLast() }
        return value
    }
}

extension String {
    /// Appends one more value of a repeated header field.
    mutating func appendField(_ value: String) {
        if isEmpty { self = value } else { self += ", " + value }
    }
}
