import JSON
import Support

/// A public client registered in a service's configuration (e.g. `services.pid_provider.clients`):
/// the redirect URIs it may use without a client attestation.
public struct RegisteredClient: Sendable, Equatable {
    public var redirectURIs: [String]

    public init(redirectURIs: [String]) { self.redirectURIs = redirectURIs }

    /// `{"redirect_uris": [...]}`; each URI must be one `RedirectURIRule` could ever accept.
    public static func parse(_ reader: JSONReader) throws(JSONReadError) -> RegisteredClient {
        try reader.rejectUnknown(allowed: ["redirect_uris"])
        let field = try reader.field("redirect_uris")
        let uris = try field.stringArray(nonEmpty: true)
        for uri in uris {
            do throws(OAuthError) { _ = try RedirectURIRule.wellFormed(uri) } catch {
                throw field.invalid("\(uri): \(error.description)")
            }
            if let parsed = try? URIReference(parsing: uri), parsed.normalizedScheme == "http", !parsed.hasLoopbackHost {
                throw field.invalid("\(uri): an http redirect URI must be a loopback URI (RFC 8252 §7.3)")
            }
        }
        return RegisteredClient(redirectURIs: uris)
    }
}

/// Where an authorization response may go (RFC 6749 §3.1.2, RFC 9700 §2.1 and §4.11, RFC 8252
/// §7.3). The code travels in the redirect, so a URI this rule lets through is where a code can
/// end up: an open redirector here hands codes to whoever wrote the PAR.
///
/// - An http URI only with a loopback host, exactly `127.0.0.1`, `[::1]` or `localhost`, any
///   port and path (RFC 8252 §7.3), for every client: a native app's local listener.
/// - A public client (no client attestation) otherwise only a URI registered for its
///   `client_id`, compared as strings (RFC 9700 §2.1: exact matching).
/// - An attested client any https URI or a private-use scheme (RFC 8252 §7.1), as native
///   wallets register: the wallet provider vouches for the app behind the `client_id`.
///
/// Never a fragment (RFC 6749 §3.1.2), userinfo, a percent-encoded host, or a scheme a
/// browser would run; anything that is not an RFC 3986 URI (a `\`, a space) is refused rather
/// than read the way one parser or another would.
public struct RedirectURIRule: Sendable {
    /// Why a redirect URI is allowed.
    public enum Permission: Sendable, Equatable {
        case loopback, registered, attested
    }

    public var clients: [String: RegisteredClient]

    public init(clients: [String: RegisteredClient] = [:]) { self.clients = clients }

    /// The permission `clientID` has to use `uri`, or `invalid_request` saying why not.
    public func check(_ uri: String, clientID: String, attested: Bool) throws(OAuthError) -> Permission {
        let parsed = try Self.wellFormed(uri)
        let scheme = parsed.normalizedScheme ?? ""
        if scheme == "http" {
            guard parsed.hasLoopbackHost else {
                throw .invalidRequest("an http redirect_uri must be a loopback URI (host 127.0.0.1, [::1] or localhost)")
            }
            return .loopback
        }
        if clients[clientID]?.redirectURIs.contains(uri) == true { return .registered }
        guard attested else {
            throw .invalidRequest("a client without a client attestation may use only a loopback redirect_uri or one "
                                  + "registered for its client_id")
        }
        if scheme == "https" {
            guard let host = parsed.host, !host.isEmpty else { throw .invalidRequest("an https redirect_uri needs a host") }
        } else if parsed.host == nil && parsed.path.isEmpty {
            throw .invalidRequest("redirect_uri has nothing after its scheme")
        }
        return .attested
    }

    /// The checks every redirect URI passes, registered or not.
    public static func wellFormed(_ uri: String) throws(OAuthError) -> URIReference {
        guard uri.utf8.count <= 2048 else { throw .invalidRequest("redirect_uri is longer than 2048 bytes") }
        let parsed: URIReference
        do { parsed = try URIReference(parsing: uri) } catch { throw .invalidRequest("redirect_uri is not a URI: \(error)") }
        guard let scheme = parsed.normalizedScheme else { throw .invalidRequest("redirect_uri must be an absolute URI") }
        guard parsed.fragment == nil else { throw .invalidRequest("redirect_uri must not have a fragment") }
        guard !blockedSchemes.contains(scheme) else { throw .invalidRequest("redirect_uri may not use the \(scheme) scheme") }
        guard parsed.userinfo == nil else { throw .invalidRequest("redirect_uri must not carry userinfo") }
        guard !parsed.hostIsPercentEncoded else { throw .invalidRequest("redirect_uri's host must not be percent-encoded") }
        return parsed
    }

    /// Schemes a browser runs or reads locally instead of handing to an app.
    static let blockedSchemes: Set<String> = ["javascript", "data", "vbscript", "file", "blob", "about", "filesystem"]
}
