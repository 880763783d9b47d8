import Cryptography
import Federation
import Foundation
import HTTP
import Issuance
import JSON
import Logging
import OAuth
import Store
import Support

/// Starts the services entity files declare beside the federation (`services`, by kind from the
/// `ServiceRegistry`), puts the metadata they generate into their entity, so the entity
/// configuration (and every resolve through the Trust Anchor) advertises exactly what they do,
/// and hands their routes to the site. Each service keeps its own keys (e.g. the PID Provider
/// under `Keys/<name>/issuer/`).
struct ServiceAssembly {
    let configuration: ServerConfiguration
    let database: Database
    let clock: Clock
    let logger: Logger
    let adminToken: String
    let walletProviderTrust: WalletProviderTrust?
    /// The services running now, for a service that answers another in process (the
    /// verifier's status list fetches from a PID Provider hosted here).
    var hostedServices: @Sendable () -> [String: [Running]] = { [:] }
    var registry: ServiceRegistry = .standard

    /// A started service, the declaration it was built from (so a reload that left the entity's
    /// file alone keeps it, and its keys, instead of starting it again) and its routes, built once.
    struct Running: Sendable {
        let kind: String
        let declaration: JSONValue
        let service: any HostedService
        let router: Router<String>

        /// Whether a file the service read at start now reads differently.
        var watchedFilesChanged: Bool { service.watchedFiles.contains { path, content in ServiceAssembly.read(path) != content } }
    }

    static func read(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { Array($0) } }

    /// The entities, those running services carrying their generated metadata, and the running
    /// services by entity ID (in kind order). Throws on a bad service declaration, naming file and
    /// field, and on two services of one entity that claim the same route or generate the same
    /// entity type.
    func assemble(_ entities: [HostedEntity], entityIDs: [String: String], previous: [String: [Running]])
        throws -> (entities: [HostedEntity], services: [String: [Running]]) {
        var entities = entities
        var services: [String: [Running]] = [:]
        for (i, entity) in entities.enumerated() where !entity.services.isEmpty {
            let file = "\(configuration.entitiesDirectory)/\(entity.name).json"
            var running: [Running] = []
            for kind in entity.services.keys.sorted() {
                let declaration = entity.services[kind]!
                if let kept = previous[entity.entityID]?.first(where: { $0.kind == kind }), kept.declaration == declaration,
                   !kept.watchedFilesChanged {
                    running.append(kept)
                    continue
                }
                guard let factory = registry.factory(kind) else {
                    throw EntityFileError(file: file, field: "services.\(kind)",
                                          "unknown service (known: \(registry.kinds.joined(separator: ", ")))")
                }
                let context = ServiceContext(
                    entityID: entity.entityID, entityName: entity.name, entityFile: file,
                    entitiesDirectory: configuration.entitiesDirectory, keysDirectory: configuration.keysDirectory,
                    entityIDs: entityIDs, database: database, clock: clock, logger: logger, adminToken: adminToken,
                    walletProviderTrust: walletProviderTrust, baseURL: configuration.effectiveBaseURL, hostedServices: hostedServices)
                let service: any HostedService
                do {
                    guard let object = declaration.objectValue else { throw EntityFileError(file: file, field: "services.\(kind)", "must be an object") }
                    service = try factory.start(JSONReader(object, path: JSONPath.root.appending("services").appending(kind)), context: context)
                } catch let error as EntityFileError {
                    throw error
                } catch {
                    throw EntityFileError(file: file, field: nil, "\(error)")
                }
                running.append(Running(kind: kind, declaration: declaration, service: service, router: service.router()))
            }
            try Self.checkRoutes(running, file: file)
            services[entity.entityID] = running
            entities[i] = entity.replacingMetadata(try Self.merge(declared: entity.metadata, generated: running, file: file))
        }
        return (entities, services)
    }

    /// Refuses two services of one entity that claim the same method and path template: the
    /// first router would answer and the second would never be reached.
    static func checkRoutes(_ services: [Running], file: String) throws(EntityFileError) {
        var claimed: [String: String] = [:]
        for service in services {
            for route in service.router.routeKeys {
                let key = "\(route.method) \(route.template)"
                if let other = claimed[key], other != service.kind {
                    throw EntityFileError(file: file, field: "services",
                                          "services \(other) and \(service.kind) both serve \(key) on this entity")
                }
                claimed[key] = service.kind
            }
        }
    }

    /// The entity file's metadata with each service's generated metadata underneath: a member
    /// the file gives for an entity type replaces the generated one; types no service generates
    /// stay as declared. Two services generating the same entity type are refused: their
    /// endpoints would be merged into one document that describes neither.
    static func merge(declared: [String: JSONValue], generated services: [Running], file: String)
        throws(EntityFileError) -> [String: JSONValue] {
        var out = declared
        var generatedBy: [String: String] = [:]
        for service in services {
            for (type, generated) in service.service.generatedMetadata {
                if let other = generatedBy[type] {
                    throw EntityFileError(file: file, field: "services",
                                          "services \(other) and \(service.kind) both generate \(type) metadata on this entity")
                }
                generatedBy[type] = service.kind
                var merged = generated
                for (k, v) in declared[type]?.objectValue ?? [:] { merged[k] = v }
                out[type] = .object(merged)
            }
        }
        return out
    }

    /// Calls every running service's purge (each service shares the database, but knows its own
    /// tables); returns the rows removed. One service failing does not stop the others.
    static func purge(_ services: [String: [Running]], now: Int64, logger: Logger) -> Int {
        var removed = 0
        for (entityID, running) in services.sorted(by: { $0.key < $1.key }) {
            for service in running {
                do {
                    removed += try service.service.purge(now: now)
                } catch {
                    logger.warning("purging the expired state of \(service.kind) on \(entityID) failed: \(error)")
                }
            }
        }
        return removed
    }

    /// The admin token: `--admin-token`, else `TRUSTBED_ADMIN_TOKEN`, else `Keys/admin-token`
    /// (created with 32 random bytes on first start and printed once, so a person can use it).
    /// 32 random bytes in base64url that do not start with '-': a token printed for people to
    /// paste after `--admin-token` must not read as an option (1 in 64 would).
    static func newAdminToken() -> String {
        while true {
            let token = Base64URL.encode(SecureRandom.bytes(32))
            if token.first != "-" { return token }
        }
    }

    static func adminToken(configured: String?, keysDirectory: String, logger: Logger) throws -> String {
        if let configured, !configured.isEmpty { return configured }
        if let env = ProcessInfo.processInfo.environment["TRUSTBED_ADMIN_TOKEN"], !env.isEmpty { return env }
        let path = "\(keysDirectory)/admin-token"
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !token.isEmpty { return token }
        }
        try PrivateDirectory.create(keysDirectory)
        let token = newAdminToken()
        do {
            try ExclusiveFile.create(path, token + "\n")
            logger.notice("created the admin token in \(path): \(token)")
            return token
        } catch {
            // Another process created it first: use theirs.
            return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
