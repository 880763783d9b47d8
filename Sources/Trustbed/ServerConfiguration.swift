import Federation
import HTTP

/// What `trustbed serve` is told on the command line.
public struct ServerConfiguration: Sendable {
    public var entitiesDirectory = "Entities"
    public var keysDirectory = "Keys"
    public var databasePath = "trustbed.sqlite"
    public var host = "127.0.0.1"
    public var port: UInt16 = 8080
    public var baseURL: String?
    /// URL prefixes the resolver may fetch from besides the origins the entity files name.
    public var fetchAllow: [String] = []
    /// Budget of the signed-statement cache (least recently used statements are re-signed).
    public var statementCacheBytes = FederationHost.defaultStatementCacheBytes
    /// Threads for resolves that wait on other hosts, and how many such resolves may queue.
    public var remoteThreads = 32
    public var remoteQueue = 256
    /// How often the server looks for changes the CLI signals through the database.
    public var reloadInterval: Double = 1
    /// How often expired remote statements and issuance state are deleted from the database.
    public var purgeInterval: Double = 600
    /// Connections one client address may hold open at once (see `HTTPServerConfiguration`).
    public var perAddressConnections = HTTPServerConfiguration.defaultPerAddressConnectionLimit
    /// Bearer token of the issuers' admin API; nil means `TRUSTBED_ADMIN_TOKEN` or `Keys/admin-token`.
    public var adminToken: String?

    public init() {}

    public var effectiveBaseURL: String {
        if let b = baseURL { return b.hasSuffix("/") ? String(b.dropLast()) : b }
        let h = host.contains(":") ? "[\(host)]" : host
        return "http://\(h):\(port)"
    }
}
