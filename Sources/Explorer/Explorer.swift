import Federation
import Support

/// The federation explorer (issue 19): HTML pages that show a federation as people learn and
/// debug it — the hierarchy, each entity's statements, how a trust chain and its metadata policy
/// resolve, and `trustbed check` as a page. It reads the running `FederationHost` (the same
/// statements the federation endpoints serve, never a second copy) and, for entities of other
/// servers, fetches through the host's resolver with its allow-list and limits.
///
/// Folders: `Model/` builds plain values from the host (a tree level, an entity view, a chain
/// trace, a check report); `Pages/` renders them into the shared `PageLayout` (every value
/// escaped); `Endpoints/` is the only part importing `HTTP`. Pages are not memoized and run on
/// the ordinary workers, so they never make a federation endpoint wait behind a cache.
public struct Explorer: Sendable {
    /// The federation as currently loaded (replaced on reload: the server builds a new
    /// explorer with each new host).
    public let host: FederationHost
    /// The server's base URL: links to hosted entities are under it, others are marked external.
    public let baseURL: String
    public let clock: Clock
    /// The hierarchy, worked out lazily once per host (a new explorer comes with each host).
    public let tree: FederationTree
    /// Where a page that must fetch from other servers is made: the pool resolves wait on
    /// (`FederationRoutes.resolve`), so a slow host ties up a pool thread, never an HTTP worker
    /// that federation endpoints need. nil (tests): on the worker.
    public let remoteWork: WorkPool?

    public init(host: FederationHost, baseURL: String, clock: Clock, remoteWork: WorkPool? = nil) {
        self.host = host
        self.baseURL = baseURL
        self.clock = clock
        self.remoteWork = remoteWork
        tree = FederationTree(host: host)
    }
}
