import Support
import Federation
import Foundation
import HTTP
import JSON
import Logging
import Store

/// The composition root: loads `Entities/` and `Keys/`, opens the database, serves HTTP, and
/// swaps in a fresh `FederationHost` whenever entity files, keys or revocations change (the CLI
/// signals those through the database), so changes apply without a restart.
public final class TrustbedServer: @unchecked Sendable {
    /// What a request reads, swapped whole on reload. A class, so taking a snapshot per request
    /// is one retain rather than one per field.
    private final class State: Sendable {
        let host: FederationHost
        let router: EntityRouter
        let index: HTTPResponse
        let fingerprint: String

        init(host: FederationHost, router: EntityRouter, index: HTTPResponse, fingerprint: String) {
            self.host = host
            self.router = router
            self.index = index
            self.fingerprint = fingerprint
        }
    }

    public let configuration: ServerConfiguration
    private let logger: Logger
    private let clock: Clock
    private let database: Database
    private let fetcher: StatementFetcher
    private let state: Locked<State>
    private var http: HTTPServer?
    private var monitor: Thread?
    private let stopping = NSCondition()
    private var stopped = false

    public init(configuration: ServerConfiguration, logger: Logger, clock: Clock = SystemClock(),
                fetcher: StatementFetcher? = nil) throws {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.fetcher = fetcher ?? HTTPStatementFetcher(allowedPrefixes: configuration.fetchAllow)
        database = try Database(path: configuration.databasePath)
        state = Locked(try Self.load(configuration, database: database, clock: clock, fetcher: self.fetcher, logger: logger))
    }

    private static let healthy = HTTPResponse.json(["status": "ok"]).prepared()

    public var host: FederationHost { state.read { $0.host } }
    public var boundPort: UInt16 { http?.boundPort ?? configuration.port }

    public func start() throws {
        var httpConfig = HTTPServerConfiguration()
        httpConfig.host = configuration.host
        httpConfig.port = configuration.port
        // unowned(unsafe): a checked unowned reference costs an atomic operation per request. Safe,
        // because the reload thread below holds this object until stop(), which ends the HTTP
        // server and so every handler call.
        let server = HTTPServer(configuration: httpConfig, logger: logger) { [unowned(unsafe) self] request in self.handle(request) }
        try server.start()
        http = server
        let t = Thread { self.watch() }
        t.name = "trustbed-reload"
        t.start()
        monitor = t
        logger.info("serving \(host.entities.count) entities at \(configuration.effectiveBaseURL)")
    }

    public func stop() {
        stopping.withLock { stopped = true; stopping.broadcast() }
        http?.stop()
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let s = state.current
        if request.path == "/health" { return Self.healthy }
        if request.path == "/" { return s.index }
        guard let (entityID, rest) = s.router.match(request),
              let response = s.host.handle(entityID: entityID, path: String(rest), request: request) else {
            return .error(status: 404, code: "not_found", description: "nothing is served at \(request.path)")
        }
        return response
    }

    /// Polls for changes; cheap (a small query and a few stat calls) and off the request path.
    private func watch() {
        var nextPurge = Date()
        while true {
            let done = stopping.withLock { () -> Bool in
                if !stopped { _ = stopping.wait(until: Date(timeIntervalSinceNow: configuration.reloadInterval)) }
                return stopped
            }
            if done { return }
            reloadIfChanged()
            if Date() >= nextPurge {
                purgeExpiredStatements()
                nextPurge = Date(timeIntervalSinceNow: configuration.purgeInterval)
            }
        }
    }

    /// Drops remote statements past their `exp` from the database cache, which would otherwise
    /// grow with every entity ever resolved; a lookup never returns them anyway.
    public func purgeExpiredStatements() {
        do {
            let removed = try StatementCacheRepository(database: database).purge(now: clock.now())
            if removed > 0 { logger.debug("purged \(removed) expired cached statements") }
        } catch {
            logger.warning("purging the statement cache failed: \(error)")
        }
    }

    /// Rebuilds the host when something changed. A broken edit to an entity file is logged and the
    /// running federation keeps serving; only start-up refuses bad files.
    public func reloadIfChanged() {
        let current = Self.fingerprint(configuration, database: database)
        guard current != state.read({ $0.fingerprint }) else { return }
        do {
            let next = try Self.load(configuration, database: database, clock: clock, fetcher: fetcher, logger: logger)
            state.withLock { $0 = next }
            // Answers the HTTP server reuses came from the old host.
            http?.clearMemo()
            logger.info("reloaded entities, keys and trust mark state")
        } catch {
            logger.error("reload failed, still serving the previous configuration: \(error)")
            // Remember the fingerprint so a broken file is reported once, not every second.
            state.withLock { $0 = State(host: $0.host, router: $0.router, index: $0.index, fingerprint: current) }
        }
    }

    private static func load(_ c: ServerConfiguration, database: Database, clock: Clock, fetcher: StatementFetcher,
                             logger: Logger) throws -> State {
        let fingerprint = fingerprint(c, database: database)
        let catalog = try EntityCatalog.load(directory: c.entitiesDirectory, baseURL: c.effectiveBaseURL)
        let keys = try KeyManager(directory: c.keysDirectory, entities: catalog.entities, database: database, clock: clock)
        let host = FederationHost(entities: catalog.entities, keys: keys, clock: clock, database: database, fetcher: fetcher, logger: logger)
        let router = EntityRouter(entityIDs: catalog.entities.map(\.entityID), baseURL: catalog.baseURL)
        let index: JSONValue = [
            "service": "trustbed",
            "entities": .array(catalog.entities.sorted { $0.name < $1.name }.map { e in
                [
                    "name": .string(e.name),
                    "entity_id": .string(e.entityID),
                    "entity_configuration": .string(e.entityID + "/.well-known/openid-federation"),
                    "trust_anchor": .bool(e.isTrustAnchor),
                ]
            }),
        ]
        return State(host: host, router: router, index: HTTPResponse.json(index).prepared(), fingerprint: fingerprint)
    }

    /// What a reload depends on: the change counter the CLI bumps, and the entity files' and key
    /// pointers' sizes and modification times.
    static func fingerprint(_ c: ServerConfiguration, database: Database) -> String {
        var parts = [(try? SettingsRepository(database: database).get(ChangeCounter.key)) ?? "0"]
        let fm = FileManager.default
        for dir in [c.entitiesDirectory, c.keysDirectory] {
            let names = ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).sorted()
            for n in names {
                var path = (dir as NSString).appendingPathComponent(n)
                if dir == c.keysDirectory { path = (path as NSString).appendingPathComponent("active") }
                if let a = try? fm.attributesOfItem(atPath: path) {
                    let m = (a[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                    parts.append("\(n):\(a[.size] ?? 0):\(m)")
                }
            }
        }
        return parts.joined(separator: "|")
    }
}

/// The counter other processes bump after changing state a running server must pick up.
public enum ChangeCounter {
    static let key = "change_counter"
    public static func bump(_ database: Database) throws {
        _ = try SettingsRepository(database: database).increment(key)
    }
}
