import ArgumentParser
import Cryptography
import Foundation
import Logging
import Federation
import Trustbed

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the federation declared in the entities directory.")

    @OptionGroup var paths: StatePaths
    @Option(help: "Address to bind (IPv4 or IPv6 literal).") var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port: UInt16 = 8080
    @Option(help: "Base URL of entity IDs (default http://<host>:<port>); set it to the public URL behind a proxy.")
    var baseURL: String?
    @Option(help: ArgumentHelp("Also fetch remote statements from URLs starting with this prefix (repeatable).",
                               discussion: "Without it the resolver fetches only from the origins the entity files name (the base URL, absolute entity IDs and authority hints, remote subordinates, trust mark issuers, owners and subjects); anything else is refused at once, without a connection."))
    var fetchAllow: [String] = []
    @Option(help: "Memory budget of the signed-statement cache in MiB; the least recently used statements are re-signed when needed.")
    var statementCacheMb = FederationHost.defaultStatementCacheBytes >> 20
    @Option(help: "Least severe log level written to standard error: trace, debug, info (with the access log), notice, warning, error or critical.")
    var logLevel: Logger.Level = .info
    @Option(help: ArgumentHelp("Bearer token of the issuers' admin API (offers, issued credentials).",
                               discussion: "Without it: the TRUSTBED_ADMIN_TOKEN variable, else Keys/admin-token, created on first start and printed."))
    var adminToken: String?
    @Option(help: ArgumentHelp("Connections one client address may hold open at once (0: no cap but the server's 1,024).",
                               discussion: "Behind a reverse proxy every request comes from the proxy's address: raise it there."))
    var perAddressConnections = ServerConfiguration().perAddressConnections
    @Option(help: "Seconds between purges of expired issuance state and cached remote statements.")
    var purgeInterval: Double = 600

    func run() throws {
        // First, before any key is read: threads the server cannot join may still be inside
        // libcrypto when exit() runs its atexit handlers (see OpenSSLLifetime).
        OpenSSLLifetime.keepUntilProcessExit()
        let sink = LogSink()
        // Lines are batched; whatever is pending must reach the journal however run() ends.
        defer { sink.flush() }
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StandardErrorLogHandler(label: label, sink: sink)
            handler.logLevel = level
            return handler
        }
        var c = ServerConfiguration()
        c.entitiesDirectory = paths.entities
        c.keysDirectory = paths.keys
        c.databasePath = paths.database
        c.host = host
        c.port = port
        c.baseURL = baseURL
        c.fetchAllow = fetchAllow
        c.adminToken = adminToken
        guard perAddressConnections >= 0 else { throw ValidationError("--per-address-connections must not be negative") }
        c.perAddressConnections = perAddressConnections
        guard purgeInterval > 0 else { throw ValidationError("--purge-interval must be positive") }
        c.purgeInterval = purgeInterval
        guard statementCacheMb > 0 else { throw ValidationError("--statement-cache-mb must be at least 1") }
        c.statementCacheBytes = statementCacheMb << 20
        let server: TrustbedServer
        do {
            server = try TrustbedServer(configuration: c, logger: Logger(label: "trustbed"))
        } catch {
            throw ValidationError("cannot start: \(error)")
        }
        try server.start()
        // Written unbuffered: the start-up line must reach a journal or pipe at once, not at exit.
        FileHandle.standardOutput.write(Data("trustbed serving at \(c.effectiveBaseURL) (entity index at \(c.effectiveBaseURL)/)\n".utf8))
        waitForTermination()
        server.stop()
    }

    /// Blocks until SIGINT or SIGTERM, then returns so the server stops cleanly.
    private func waitForTermination() {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let done = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { done.signal() }
            s.resume()
            return s
        }
        done.wait()
        sources.forEach { $0.cancel() }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Where state lives; shared by every command that touches it.
struct StatePaths: ParsableArguments {
    @Option(help: "Directory of entity files.") var entities = "Entities"
    @Option(help: "Directory of entity keys.") var keys = "Keys"
    @Option(help: "SQLite database file.") var database = "trustbed.sqlite"
}
