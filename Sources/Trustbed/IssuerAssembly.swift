import Cryptography
import Federation
import Foundation
import Issuance
import JSON
import Logging
import Store
import Support

/// Starts the services entity files declare beside the federation (today `pid_provider`):
/// reads each service's configuration, loads or creates its keys under `Keys/<name>/issuer/`,
/// and puts the metadata it generates into the entity, so the entity configuration (and every
/// resolve through the Trust Anchor) advertises exactly what the service does.
struct IssuerAssembly {
    let configuration: ServerConfiguration
    let database: Database
    let clock: Clock
    let logger: Logger
    let adminToken: String
    let walletProviderTrust: WalletProviderTrust?

    /// A started provider and the declaration it was built from, so a reload that left the
    /// entity's file alone keeps it (and its keys) instead of starting it again.
    struct Running: Sendable {
        let declaration: JSONValue
        let provider: PIDProvider
    }

    /// The catalog's entities, those with a PID Provider carrying its generated metadata, and
    /// the providers by entity ID. Throws on a bad service declaration, naming file and field.
    func assemble(_ catalog: EntityCatalog, previous: [String: Running]) throws -> (entities: [HostedEntity], providers: [String: Running]) {
        var entities = catalog.entities
        var providers: [String: Running] = [:]
        let ids = catalog.idsByName
        for (i, entity) in entities.enumerated() {
            guard let declaration = entity.services["pid_provider"]?.objectValue else { continue }
            let running: Running
            if let kept = previous[entity.entityID], kept.declaration == .object(declaration) {
                running = kept
            } else {
                running = Running(declaration: .object(declaration),
                                  provider: try start(entity: entity, declaration: declaration, entityIDs: ids))
                logger.info("PID Provider \(entity.entityID) started with \(running.provider.configuration.personas.count) personas")
            }
            providers[entity.entityID] = running
            entities[i] = entity.replacingMetadata(running.provider.mergedEntityMetadata(entity.metadata))
        }
        return (entities, providers)
    }

    private func start(entity: HostedEntity, declaration: [String: JSONValue], entityIDs: [String: String]) throws -> PIDProvider {
        let file = "\(configuration.entitiesDirectory)/\(entity.name).json"
        let config: IssuerConfiguration
        do {
            config = try IssuerConfiguration.parse(JSONReader(.object(declaration), path: JSONPath.root.appending("services").appending("pid_provider"))) { path in
                try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: try resolve(path)))))
            }
        } catch {
            throw EntityFileError(file: file, field: nil, "\(error)")
        }
        let keys = try IssuerKeys.loadOrCreate(
            directory: "\(configuration.keysDirectory)/\(entity.name)/issuer", issuer: entity.entityID,
            country: config.issuingCountry, authority: config.issuingAuthority, now: clock.now())
        let anchors = config.trustAnchors.map { entityIDs[$0] ?? $0 }
        var roots: [Certificate] = []
        for path in config.attestationRootFiles {
            do {
                roots += try Certificate.certificates(pem: String(contentsOfFile: try resolve(path), encoding: .utf8))
            } catch {
                throw EntityFileError(file: file, field: "services.pid_provider.attestation_roots", "\(path): \(error)")
            }
        }
        return PIDProvider(issuer: entity.entityID, entityName: entity.name, configuration: config, keys: keys, database: database,
                           clock: clock, logger: logger, trustAnchors: anchors, attestationRoots: roots,
                           walletProviderTrust: walletProviderTrust, adminToken: adminToken)
    }

    /// A file a service names, relative to `Entities/`; absolute paths and `..` are refused so
    /// an entity file cannot reach outside its folder.
    private func resolve(_ relative: String) throws -> String {
        guard !relative.hasPrefix("/"), !relative.split(separator: "/").contains("..") else {
            throw IssuanceError.invalidRequest("\(relative): files must be named relative to the entities folder, without '..'")
        }
        return "\(configuration.entitiesDirectory)/\(relative)"
    }

    /// The admin token: `--admin-token`, else `TRUSTBED_ADMIN_TOKEN`, else `Keys/admin-token`
    /// (created with 32 random bytes on first start and printed once, so a person can use it).
    /// 32 random bytes in base64url that do not start with '-': a token printed for people to
    /// paste after `--admin-token` must not read as an option (1 in 64 would).
    static func newAdminToken() -> String {
        while true {
            let token = PIDProvider.randomToken()
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
