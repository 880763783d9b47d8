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
    /// Header fields with lower-cased names, in the order received; a repeated field's values
    /// are joined with ", " (RFC 9110 §5.3). A list rather than a dictionary: a request carries
    /// a handful, and building a dictionary of them costs more than scanning the list at each
    /// `header(_:)` (measured: see docs/performance.md).
    public private(set) var fields: [(name: String, value: String)]
    public var body: [UInt8]
    /// The client's IP address as text ("" when unknown). From the server it is formatted
    /// when read (see `ClientAddress`).
    public var remoteAddress: String {
        get {
            switch remote {
            case .text(let text): return text
            case .client(let address): return address.text
            }
        }
        set { remote = .text(newValue) }
    }
    private var remote: Remote
    /// The routing headers as the server already read them (for its memo), so that routing
    /// does not look them up again; nil for a request built elsewhere. See `routingHeaders`.
    var routing: RoutingHeaders?

    public init(
        method: HTTPMethod, path: String, rawQuery: String? = nil, headers: [String: String] = [:],
        body: [UInt8] = [], remoteAddress: String = ""
    ) {
        var fields: [(name: String, value: String)] = []
        // In name order: a dictionary has none, and repeated names must join the same way each run.
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            Self.add(name: ASCII.lowercased(name), value: value, to: &fields)
        }
        self.init(trustedMethod: method, path: path, rawQuery: rawQuery, fields: fields, body: body, remote: .text(remoteAddress))
    }

    /// For the server, whose header names are already lower-cased and repeats joined.
    init(
        trustedMethod method: HTTPMethod, path: String, rawQuery: String?, fields: [(name: String, value: String)],
        body: [UInt8], remote: Remote
    ) {
        self.method = method
        self.path = path
        self.rawQuery = rawQuery
        self.query = rawQuery.map { URLEncoding.pairs($0) } ?? []
        self.fields = fields
        self.body = body
        self.remote = remote
    }

    /// Where `remoteAddress` comes from: given as text, or the server's copy of the socket
    /// address, formatted on demand.
    enum Remote: Sendable {
        case text(String)
        case client(ClientAddress)
    }

    /// Header fields by lower-cased name; repeated fields are joined with ", ".
    public var headers: [String: String] {
        Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// Adds a field (its name already lower-cased), joining a repeated one's values.
    static func add(name: String, value: String, to fields: inout [(name: String, value: String)]) {
        if let i = fields.firstIndex(where: { $0.name == name }) { fields[i].value.appendField(value) }
        else { fields.append((name: name, value: value)) }
    }

    /// `Host`, `X-Forwarded-Host` and `X-Forwarded-Proto`: what chooses the mount.
    var routingHeaders: RoutingHeaders {
        routing ?? RoutingHeaders(host: header("host"), forwardedHost: header("x-forwarded-host"),
                                  forwardedProto: header("x-forwarded-proto"))
    }

    /// Header value by case-insensitive name.
    ///
    /// Field names are stored lower-cased and callers mostly ask in lower case, so a plain
    /// comparison decides first; only a name with capitals is compared ignoring case. Ignoring
    /// case for every field would be paid on every request: routing alone asks for three
    /// headers.
    public func header(_ name: String) -> String? {
        for field in fields where field.name == name { return field.value }
        guard ASCII.hasUppercase(name) else { return nil }
        for field in fields where ASCII.equalsIgnoringCase(field.name, name) { return field.value }
        return nil
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

/// The request headers that choose the mount (see `Site`) and so belong to the memo's key.
/// From the server, a repeated header's first value; from `headers`, all values joined, whose
/// first value is the same.
struct RoutingHeaders: Hashable, Sendable {
    let host: String?
    let forwardedHost: String?
    let forwardedProto: String?
}

extension String {
    /// Appends one more value of a repeated header field.
    mutating func appendField(_ value: String) {
        if isEmpty { self = value } else { self += ", " + value }
    }
}
