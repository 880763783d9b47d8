/// What `trustbed serve` is told on the command line.
public struct ServerConfiguration: Sendable {
    public var entitiesDirectory = "Entities"
    public var keysDirectory = "Keys"
    public var databasePath = "trustbed.sqlite"
    public var host = "127.0.0.1"
    public var port: UInt16 = 8080
    public var baseURL: String?
    /// URL prefixes the resolver may fetch remote statements from; empty: any http(s) URL.
    public var fetchAllow: [String] = []
    /// How often the server looks for changes made by other processes (CLI) or to entity files.
    public var reloadInterval: Double = 1
    /// How often expired remote statements are deleted from the database cache.
    public var purgeInterval: Double = 600

    public init() {}

    public var effectiveBaseURL: String {
        if let b = baseURL { return b.hasSuffix("/") ? String(b.dropLast()) : b }
        let h = host.contains(":") ? "[\(host)]" : host
        return "http://\(h):\(port)"
    }
}
