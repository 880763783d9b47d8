import Foundation
import JOSE
import JSON
import Pages

/// What every explorer page shares: the layout (the offer pages' look, signed "federation
/// explorer"), and the three ways a statement's data reaches the page. Everything a statement
/// carries is data from another host, so it only ever goes through Mustache's escaping
/// (`{{value}}`), never `{{{value}}}`; a link is made only from an http(s) URL, and one that
/// leaves this server is marked as such.
struct ExplorerPage: Sendable {
    static let layout = PageLayout(service: "federation explorer")
    private let body: PageLayout.Body

    init(_ template: String) { body = PageLayout.Body(template) }

    func render(title: String, context: [String: Any]) -> String {
        Self.layout.render(title: title, body: body, context: context)
    }

    /// A link for a value that should be a URL: nil unless it is an absolute http or https URL
    /// (no `javascript:`, `data:` or other scheme ever becomes an `href`). `external` is true
    /// when it leaves `baseURL`'s origin, so the page can say so.
    static func link(_ value: String, baseURL: String) -> (href: String, external: Bool)? {
        guard let url = URLComponents(string: value), let scheme = url.scheme?.lowercased(),
              scheme == "https" || scheme == "http", url.host?.isEmpty == false else { return nil }
        return (value, origin(value) != origin(baseURL))
    }

    /// The explorer's own page for an entity ID, hosted here or not.
    static func entityHref(_ entityID: String) -> String {
        "/explorer/entity?id=" + Self.queryEscaped(entityID)
    }

    static func queryEscaped(_ value: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// JSON as people read it: indented, members sorted, escapes as the serializer writes them.
    static func pretty(_ value: JSONValue) -> String { value.serialized(pretty: true) }

    /// A time claim (`iat`, `exp`, ...) also in human form, UTC.
    static func humanTime(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    private static func origin(_ url: String) -> String? {
        guard let c = URLComponents(string: url), let scheme = c.scheme?.lowercased(), let host = c.host?.lowercased() else {
            return nil
        }
        return "\(scheme)://\(host)\(c.port.map { ":\($0)" } ?? "")"
    }
}
