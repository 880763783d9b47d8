import Explorer
import Federation
import Foundation
import HTTP
import JSON
import Logging
import OAuth
import Store
import Support

/// The composition root: loads `Entities/` and `Keys/`, opens the database, mounts every
/// entity's services on one `Site`, serves HTTP, and swaps in a fresh host and site whenever
/// entity files, keys or revocations change, so changes apply without a restart.
public final class TrustbedServer: Sendable {
    /// What a request reads, swapped whole on reload.
    private final class State: Sendable {
        let catalog: EntityCatalog
        let keys: KeyManager
        let host: FederationHost
        let site: Site<String>
        let fetchOrigins: Set<String>
        /// Running services (PID Providers, ...) by entity ID.
        let services: [String: [ServiceAssembly.Running]]

        init(catalog: EntityCatalog, keys: KeyManager, host: FederationHost, site: Site<String>, fetchOrigins: Set<String>,
             services: [String: [ServiceAssembly.Running]]) {
            self.catalog = catalog
            self.keys = keys
            self.host = host
            self.site = site
            self.fetchOrigins = fetchOrigins
            self.services = services
        }

        /// A method rather than `state.current.site.respond(to:)` in the server's closure: that
        /// copied the `Site` out of the state on every request, retaining and releasing its seven
        /// arrays and tables (shared by every worker thread), where here it is borrowed.
        func respond(to request: HTTPRequest) -> HTTPResponse { site.respond(to: request) }
        func bodyLimit(for request: HTTPRequest) -> Int? { site.bodyLimit(for: request) }
    }

    public let configuration: ServerConfiguration
    private let logger: Logger
    private let clock: Clock
    private let database: Database
    /// Injected by tests; otherwise built from the fetch scope at each load.
    private let fixedFetcher: StatementFetcher?
    /// Resolves that wait on other hosts run here, never on an HTTP worker.
    private let remoteWork: WorkPool
    private let services: ServiceAssembly
    /// The host the wallet-provider trust check resolves with; follows every reload.
    private let currentHost: Locked<FederationHost?>
    /// The running services, for those that answer each other in process; follows every reload.
    private let runningServices: Locked<[String: [ServiceAssembly.Running]]>
    private let state: Locked<State>
    private let changeCounter: Locked<String>
    /// The attestation root files' contents the poller last reloaded for (see `reloadIfRootFilesChanged`).
    private let rootFilesSeen = Locked<[String: [UInt8]?]?>(nil)
    private let running = Locked<(http: HTTPServer?, watcher: FileWatcher?, stopped: Bool)>((nil, nil, false))
    private let stopping = DispatchSemaphore(value: 0)
    /// The poller and the key generator: `stop()` waits for both (see there).
    private let background = DispatchGroup()

    public init(configuration: ServerConfiguration, logger: Logger, clock: Clock = SystemClock(),
                fetcher: StatementFetcher? = nil) throws {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        fixedFetcher = fetcher
        database = try Database(path: configuration.databasePath)
        remoteWork = WorkPool(name: "trustbed-remote", threads: configuration.remoteThreads, queueLimit: configuration.remoteQueue)
        changeCounter = Locked(Self.counter(database))
        let catalog = try EntityCatalog.load(directory: configuration.entitiesDirectory, baseURL: configuration.effectiveBaseURL)
        let keys = KeyManager(directory: configuration.keysDirectory, entities: catalog.entities, database: database, clock: clock)
        let adminToken = try ServiceAssembly.adminToken(configured: configuration.adminToken, keysDirectory: configuration.keysDirectory,
                                                       logger: logger)
        // The services write several rows per request (an issuer's per credential): their own
        // connection (so federation reads never queue behind them) without an fsync per commit;
        // it still survives kill -9.
        let servicesDatabase = try Database(path: configuration.databasePath, durability: .processCrash)
        // Client attestations are checked against the federation as it is at that moment.
        let currentHost = Locked<FederationHost?>(nil)
        let walletProviders = FederationWalletProviderTrust(host: { currentHost.current! })
        let runningServices = Locked<[String: [ServiceAssembly.Running]]>([:])
        var services = ServiceAssembly(configuration: configuration, database: servicesDatabase, clock: clock, logger: logger,
                                       adminToken: adminToken, walletProviderTrust: walletProviders)
        services.hostedServices = { runningServices.current }
        self.runningServices = runningServices
        self.services = services
        state = Locked(try Self.assemble(catalog, previous: nil, keys: keys, configuration: configuration, database: database,
                                         clock: clock, fixedFetcher: fetcher, remoteWork: remoteWork, services: services, logger: logger))
        self.currentHost = currentHost
        currentHost.withLock { $0 = state.current.host }
        runningServices.withLock { $0 = state.current.services }
        // Loading and assembling 100,000 entities frees more than it keeps; hand that back.
        EntityDirectory.releaseFreedMemory()
    }

    public var host: FederationHost { state.read { $0.host } }
    public var boundPort: UInt16 { running.read { $0.http?.boundPort } ?? configuration.port }

    public func start() throws {
        var httpConfig = HTTPServerConfiguration()
        httpConfig.host = configuration.host
        httpConfig.port = configuration.port
        httpConfig.perAddressConnectionLimit = configuration.perAddressConnections
        let state = self.state
        let server = HTTPServer(configuration: httpConfig, logger: logger, routeBodyLimit: { request in state.current.bodyLimit(for: request) }) {
            request in state.current.respond(to: request)
        }
        try server.start()
        // Keys/: only removals matter; the server itself creates an entity's folder on first use,
        // and the CLI signals rotations and revocations through the database.
        let watcher = try FileWatcher(directories: [configuration.entitiesDirectory, configuration.keysDirectory],
                                      removalsOnly: [configuration.keysDirectory]) { [weak self] paths in
            self?.filesChanged(paths)
        }
        running.withLock { $0 = (server, watcher, false) }
        background.enter()
        let poller = Thread { [self] in
            defer { background.leave() }
            pollChangeCounter()
        }
        poller.name = "trustbed-changes"
        poller.start()
        background.enter()
        let generator = Thread { [self] in
            defer { background.leave() }
            let started = Date()
            let made = state.read { $0.keys }.generateMissing { self.running.read { $0.stopped } }
            if made > 0 { logger.notice("created the keys of \(made) entities in \(String(format: "%.1f", -started.timeIntervalSinceNow)) s") }
        }
        generator.name = "trustbed-keygen"
        generator.qualityOfService = .utility
        generator.start()
        logger.info("serving \(host.entities.count) entities at \(configuration.effectiveBaseURL)")
    }

    /// Stops serving and returns only once no thread of the server's own is left running: the
    /// HTTP workers and the file watcher are joined, and the poller and the key generator are
    /// waited for. The caller usually exits next, and `exit()` runs OpenSSL's atexit cleanup,
    /// which frees libcrypto's global state: a key generator still creating keys then (a large
    /// federation's first start) crashed the process now and then on SIGTERM. The generator
    /// checks the stop flag before each key, so the wait is short.
    public func stop() {
        let (http, watcher) = running.withLock { r -> (HTTPServer?, FileWatcher?) in
            r.stopped = true
            return (r.http, r.watcher)
        }
        stopping.signal()
        watcher?.stop()
        http?.stop()
        remoteWork.shutdown()
        background.wait()
    }

    /// An edit under `Entities/` reloads the catalog; a key folder removed by hand makes that
    /// entity's key be read (or created) again.
    private func filesChanged(_ paths: Set<String>) {
        let keysDirectory = watchedPath(configuration.keysDirectory)
        let keys = state.read { $0.keys }
        var removedKeys: [String] = []
        for path in paths where path == keysDirectory || path.hasPrefix(keysDirectory + "/") {
            if path == keysDirectory { keys.invalidate() } else { removedKeys.append(String(path.dropFirst(keysDirectory.count + 1))) }
        }
        keys.invalidate(entities: removedKeys)
        reload(keysChanged: false)
    }

    private func watchedPath(_ directory: String) -> String {
        directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    }

    /// The CLI (`keys rotate`, `keys revoke`, `trust-mark revoke`) changes the database and bumps a
    /// counter there; one small query a second is all an idle server does (files are watched
    /// through inotify), and it also purges expired remote statements every `purgeInterval`.
    private func pollChangeCounter() {
        var nextPurge = Date(timeIntervalSinceNow: configuration.purgeInterval)
        while stopping.wait(timeout: .now() + configuration.reloadInterval) == .timedOut {
            reloadIfChanged()
            reloadIfRootFilesChanged()
            if Date() >= nextPurge {
                purgeExpired()
                nextPurge = Date(timeIntervalSinceNow: configuration.purgeInterval)
            }
        }
    }

    /// Drops remote statements past their `exp` from the database cache, which would otherwise
    /// grow with every entity ever resolved, and asks every running service to drop its expired
    /// state (an issuer's offers, codes, tokens and nonces); a lookup never returns them anyway.
    public func purgeExpired() {
        let now = clock.now()
        do {
            let removed = try StatementCacheRepository(database: database).purge(now: now)
            if removed > 0 { logger.debug("purged \(removed) expired cached statements") }
        } catch {
            logger.warning("purging expired cached statements failed: \(error)")
        }
        let gone = ServiceAssembly.purge(state.current.services, now: now, logger: logger)
        if gone > 0 { logger.debug("purged \(gone) expired service records") }
    }

    /// Reloads when a file a running service read at start changed (an issuer's
    /// `attestation_roots` PEM, possibly in a folder the watcher does not watch); the assembly
    /// then restarts that service. A file that stays broken is reported once, not every second:
    /// the contents last acted on are kept.
    public func reloadIfRootFilesChanged() {
        let running = state.current.services.values.joined()
        guard running.contains(where: \.watchedFilesChanged) else { return }
        let current = running.reduce(into: [String: [UInt8]?]()) { all, service in
            for path in service.service.watchedFiles.keys { all[path] = ServiceAssembly.read(path) }
        }
        let act = rootFilesSeen.withLock { seen -> Bool in
            defer { seen = current }
            return seen != current
        }
        if act { reload(keysChanged: false) }
    }

    /// Checks the change counter and reloads when another process changed keys or revocations;
    /// tests call it instead of waiting for the poller.
    public func reloadIfChanged() {
        let current = Self.counter(database)
        if changeCounter.withLock({ c in defer { c = current }; return c != current }) { reload(keysChanged: true) }
    }

    /// Rebuilds the host and the site. Files that did not change are not parsed again; a broken
    /// edit is logged and the running federation keeps serving (only start-up refuses bad files).
    public func reload(keysChanged: Bool) {
        let previous = state.current
        do {
            let catalog = try EntityCatalog.load(directory: configuration.entitiesDirectory, baseURL: configuration.effectiveBaseURL,
                                                 reusing: previous.catalog.sources)
            if keysChanged { previous.keys.invalidate() }
            let keys = KeyManager(directory: configuration.keysDirectory, entities: catalog.entities, database: database,
                                  clock: clock, reusing: previous.keys)
            let next = try Self.assemble(catalog, previous: previous, keys: keys, configuration: configuration, database: database,
                                         clock: clock, fixedFetcher: fixedFetcher, remoteWork: remoteWork, services: services,
                                         logger: logger)
            state.withLock { $0 = next }
            currentHost.withLock { $0 = next.host }
            runningServices.withLock { $0 = next.services }
            EntityDirectory.releaseFreedMemory()
            // Answers the HTTP server reuses came from the old host.
            running.read { $0.http }?.clearMemo()
            logger.info("reloaded: \(catalog.entities.count) entities")
        } catch {
            logger.error("reload failed, still serving the previous configuration: \(error)")
        }
    }

    private static func assemble(_ catalog: EntityCatalog, previous: State?, keys: KeyManager, configuration c: ServerConfiguration,
                                 database: Database, clock: Clock, fixedFetcher: StatementFetcher?, remoteWork: WorkPool,
                                 services: ServiceAssembly, logger: Logger) throws -> State {
        let origins = FetchScope.origins(of: catalog)
        let (entities, running) = try services.assemble(catalog.entities, entityIDs: catalog.idsByName,
                                                        previous: previous?.services ?? [:])
        // Remote statements and remembered failures survive a reload unless the fetch scope changed.
        let remote: RemoteStatementSource
        if let previous, previous.fetchOrigins == origins {
            remote = previous.host.remote
        } else {
            let fetcher = fixedFetcher ?? HTTPStatementFetcher(allowedOrigins: origins, allowedPrefixes: c.fetchAllow)
            remote = RemoteStatementSource(fetcher: fetcher, store: SQLiteStatementStore(database: database), clock: clock)
        }
        let host = FederationHost(entities: entities, keys: keys, clock: clock, database: database, fetcher: remote.fetcher,
                                  logger: logger, statementCacheBytes: c.statementCacheBytes, remote: remote,
                                  trustMarkStatusClient: remote.fetcher as? TrustMarkStatusClient, baseURL: catalog.baseURL)
        let routes = FederationRoutes(host: host, remoteWork: remoteWork)
        let mounts = catalog.entities.map { e in
            var routers = routes.routers(for: e.entityID)
            routers += running[e.entityID]?.map(\.router) ?? []
            return Site<String>.Mount(url: e.entityID, context: e.entityID, routers: routers)
        }
        let index = ServerIndex(entities: catalog.entities, superiors: Set(host.subordinatesBySuperior.keys), baseURL: catalog.baseURL)
        var root = Router<Void>()
        let healthy = HTTPResponse.json(["status": "ok"]).applying(.publicRead).prepared()
        root.get("/health") { _, _, _ in healthy }
        let explorer = Explorer(host: host, baseURL: catalog.baseURL, clock: clock, remoteWork: remoteWork)
        // A browser gets the explorer's landing page; programs (JSON, `*/*`, no Accept) the index.
        root.get("/") { _, request, _ in
            if Explorer.prefersHTML(accept: request.header("accept")) { return explorer.landingPage() }
            return HTTPResponse.json(try index.page(request.parameters)).adding(header: "Vary", "Accept")
        }
        explorer.routes(into: &root)
        return State(catalog: catalog, keys: keys, host: host, site: Site(baseURL: catalog.baseURL, mounts: mounts, root: root),
                     fetchOrigins: origins, services: running)
    }

    private static func counter(_ database: Database) -> String {
        (try? SettingsRepository(database: database).get(ChangeCounter.key)) ?? "0"
    }
}

/// The counter other processes bump after changing state a running server must pick up.
public enum ChangeCounter {
    static let key = "change_counter"
    public static func bump(_ database: Database) throws {
        _ = try SettingsRepository(database: database).increment(key)
    }
}
