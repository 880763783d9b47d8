import Federation
import Foundation

/// Where the resolver may fetch from when no `--fetch-allow` is given: the origins the entity
/// files themselves name. A public resolve endpoint otherwise lets any caller make this server
/// connect to any host (an SSRF and a way to tie up its fetch slots); a federation this server
/// takes part in only ever needs the hosts its own files point at.
enum FetchScope {
    /// Lower-cased `scheme://host:port` origins (default ports spelled out) named by the catalog:
    /// the base URL, absolute entity IDs, authority hints, remote subordinates, trust mark
    /// issuers, owners and subjects.
    static func origins(of catalog: EntityCatalog) -> Set<String> {
        var urls = [catalog.baseURL]
        for e in catalog.entities {
            urls.append(e.entityID)
            urls += e.authorityHints
            urls += e.subordinates.keys
            for issuers in e.trustMarkIssuers.values { urls += issuers }
            urls += e.trustMarkOwners.values
            for i in e.trustMarksIssued { urls += i.subjects }
        }
        return Set(urls.compactMap(origin))
    }

    /// `scheme://host:port` of an absolute http(s) URL, lower-cased, with the default port made
    /// explicit so `https://a.example` and `https://a.example:443` are one origin (RFC 6454 §4).
    static func origin(_ url: String) -> String? {
        guard let c = URLComponents(string: url), let scheme = c.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = c.host?.lowercased(), !host.isEmpty else { return nil }
        let port = c.port ?? (scheme == "https" ? 443 : 80)
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed):\(port)"
    }
}
