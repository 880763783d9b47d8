import Foundation
import Support

/// Requests for this server's own origin are answered in-process, never over HTTP to itself.
/// A resolve runs on a worker (an HTTP worker, or one of the pool that may wait for other hosts);
/// an HTTP request from it to this very server needs another worker to answer, and when every
/// worker does the same none is left: the server deadlocks until the fetch times out. So a
/// statement or trust mark status under the server's origin that is hosted here comes from the
/// host directly, and anything else under that origin gets the `not_found` the server would
/// answer, without a connection.
extension FederationHost {
    /// Whether `url` is under this server's own origin (its base URL's scheme, host and port).
    func isOwnOrigin(_ url: String) -> Bool {
        guard let ownOrigin, let origin = FetchAllowList.origin(url) else { return false }
        return origin == ownOrigin
    }

    /// The federation document at `url` under this server's origin, as the server would serve it:
    /// a hosted entity's configuration (`<id>/.well-known/openid-federation`) or a hosted
    /// superior's subordinate statement (`<id>/fetch?sub=...`); anything else is `not_found`.
    func ownStatement(at url: String) throws(FederationError) -> SourcedStatement {
        let (path, query) = Self.split(url)
        if path.hasSuffix(wellKnownFederationPath) {
            let entityID = String(path.dropLast(wellKnownFederationPath.count))
            if entity(entityID) != nil {
                return SourcedStatement(try EntityStatement.decode(try signedEntityConfiguration(of: entityID).compact))
            }
        } else if path.hasSuffix(FederationEndpoint.fetch.path) {
            let superiorID = String(path.dropLast(FederationEndpoint.fetch.path.count))
            if isSuperior(superiorID), let subject = Parameters(encoded: query).all("sub").first {
                return SourcedStatement(try EntityStatement.decode(try signedSubordinateStatement(issuer: superiorID, subject: subject).compact))
            }
        }
        throw .notFound("\(url) is not served here (answered in-process: not_found)")
    }

    /// The URL without its fragment, split into path and query.
    static func split(_ url: String) -> (path: String, query: String) {
        let withoutFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? url
        let parts = withoutFragment.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
    }
}

/// Trust Mark Status requests (section 8.4.1) to this server's own origin, answered by the host
/// as its `trust-mark-status` endpoint would: a signed status response from a hosted issuer,
/// `not_found` for any other URL.
struct OwnOriginStatusClient: TrustMarkStatusClient {
    let host: FederationHost

    func post(_ url: String, form: [(name: String, value: String)]) throws(FederationError) -> String {
        let (path, _) = FederationHost.split(url)
        let suffix = FederationEndpoint.trustMarkStatus.path
        guard path.hasSuffix(suffix), let mark = form.first(where: { $0.name == "trust_mark" })?.value else {
            throw .notFound("\(url) is not served here (answered in-process: not_found)")
        }
        return try host.trustMarkStatus(issuer: String(path.dropLast(suffix.count)), trustMark: mark)
    }
}
