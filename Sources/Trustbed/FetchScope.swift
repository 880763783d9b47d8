import Federation

/// Where the resolver may fetch from when no `--fetch-allow` is given: the origins the entity
/// files themselves name. A public resolve endpoint otherwise lets any caller make this server
/// connect to any host (an SSRF and a way to tie up its fetch slots); a federation this server
/// takes part in only ever needs the hosts its own files point at.
enum FetchScope {
    /// Origins (normalised as the allow-list compares them) named by the catalog:
    /// the base URL, absolute entity IDs, authority hints, remote subordinates, trust mark
    /// issuers, owners and subjects.
    static func origins(of catalog: EntityCatalog) -> Set<String> {
        // Names under the base URL add nothing to its origin; skipping them spares parsing
        // hundreds of thousands of URLs at each start and reload.
        let local = catalog.baseURL + "/"
        var elsewhere: Set<String> = [catalog.baseURL]
        for e in catalog.entities {
            for url in [e.entityID] + e.referencedEntityIDs where !url.hasPrefix(local) { elsewhere.insert(url) }
        }
        return Set(elsewhere.compactMap(FetchAllowList.origin))
    }
}
