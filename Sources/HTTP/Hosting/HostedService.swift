import JSON

/// A service an entity runs beside the federation (the PID Provider; the Wallet Provider and
/// the verifier next), as the server's assembly sees it: what it mounts on the entity, what it
/// adds to the entity configuration, which keys it keeps, and how it forgets expired state.
/// Services are registered in `Trustbed/Services/`; an entity file names the ones it runs under
/// `services`, and the assembly mounts each on that entity.
///
/// Here, in `HTTP`, because it hands out routes: a service module conforms in its `Endpoints/`
/// folder (or the registry adapts it), so its domain code still never imports `HTTP`.
public protocol HostedService: Sendable {
    /// The routes, relative to the entity ID (`/token`, `/offers/{id}`). The assembly refuses
    /// two services of one entity that claim the same method and path template.
    func router() -> Router<String>

    /// Metadata the service generates, by entity type (`openid_credential_issuer`,
    /// `oauth_authorization_server`, ...). It goes into the entity configuration underneath the
    /// entity file's own members for that type: a member the file gives wins.
    var generatedMetadata: [String: [String: JSONValue]] { get }

    /// The key material the service keeps under `Keys/<entity name>/`: described for people
    /// (docs/configuration.md, "Keys"; `trustbed keys`). Loading and rotating stay inside the
    /// service: their shapes (an mdoc IACA and document signer, a wallet provider's attestation
    /// key) have nothing in common worth a generic type.
    var keys: [ServiceKeyDescription] { get }

    /// Deletes state that can never be used again (expired codes, tokens, nonces, offers),
    /// `now` in seconds since 1970; returns the number of records removed. Called periodically;
    /// lookups already ignore expired state, so this only bounds the database.
    func purge(now: Int64) throws -> Int

    /// Files the service read when it started besides its declaration (an issuer's
    /// `attestation_roots` PEM files), by path, with the content it read (nil: unreadable). The
    /// server restarts the service when one of them changes, as it does for an edited
    /// declaration, since the service reads them only at start.
    var watchedFiles: [String: [UInt8]?] { get }
}

extension HostedService {
    public var watchedFiles: [String: [UInt8]?] { [:] }
}

/// A folder of key material a service keeps, relative to `Keys/<entity name>/`.
public struct ServiceKeyDescription: Sendable, Equatable {
    public let folder: String
    public let purpose: String

    public init(folder: String, purpose: String) {
        self.folder = folder
        self.purpose = purpose
    }
}

extension Router {
    /// Every route as method and template, with `{name}` segments written `{}`: two templates
    /// that differ only in parameter names match the same paths.
    public var routeKeys: [(method: HTTPMethod, template: String)] {
        paths.flatMap { path in
            let template = "/" + path.template.segments.map { segment -> String in
                switch segment {
                case .literal(let text): return text
                case .parameter: return "{}"
                }
            }.joined(separator: "/")
            return path.methods.map { (method: $0, template: template) }
        }
    }
}
