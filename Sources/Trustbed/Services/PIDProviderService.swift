import Cryptography
import HTTP
import Issuance
import JSON

/// `services.pid_provider`: an OAuth 2.0 authorization server and OpenID4VCI credential issuer
/// (`PIDProvider`) on the entity, with its keys under `Keys/<name>/issuer/`.
struct PIDProviderFactory: ServiceFactory {
    var kind: String { "pid_provider" }
    var displayName: String { "PID Provider" }

    func start(_ declaration: JSONReader, context: ServiceContext) throws -> any HostedService {
        let config = try IssuerConfiguration.parse(declaration) { path in try context.readJSON(path) }
        let keys = try IssuerKeys.loadOrCreate(
            directory: "\(context.keysDirectory)/\(context.entityName)/issuer", issuer: context.entityID,
            country: config.issuingCountry, authority: config.issuingAuthority, now: context.clock.now())
        let anchors = config.trustAnchors.map { context.entityIDs[$0] ?? $0 }
        var roots: [Certificate] = []
        var rootFiles: [String: [UInt8]?] = [:]
        for path in config.attestationRootFiles {
            do {
                let resolved = try context.resolve(path)
                let content = ServiceAssembly.read(resolved)
                rootFiles[resolved] = content
                guard let content else { throw IssuanceError.invalidRequest("cannot read the file") }
                roots += try Certificate.certificates(pem: String(decoding: content, as: UTF8.self))
            } catch {
                throw EntityFileError(file: context.entityFile, field: "services.\(kind).attestation_roots", "\(path): \(error)")
            }
        }
        let provider = PIDProvider(
            issuer: context.entityID, entityName: context.entityName, configuration: config, keys: keys,
            database: context.database, clock: context.clock, logger: context.logger, trustAnchors: anchors,
            attestationRoots: roots, walletProviderTrust: context.walletProviderTrust, adminToken: context.adminToken,
            credentialObserver: WalletInstanceValidityObserver(database: context.database, clock: context.clock, logger: context.logger))
        context.logger.info("PID Provider \(context.entityID) started with \(config.personas.count) personas")
        return PIDProviderService(provider: provider, watchedFiles: rootFiles)
    }
}

/// A running PID Provider as the assembly sees it.
struct PIDProviderService: HostedService {
    let provider: PIDProvider
    /// The `attestation_roots` PEM files as read at start: an edit restarts the provider.
    let watchedFiles: [String: [UInt8]?]

    func router() -> Router<String> { IssuanceRoutes(provider: provider).router() }

    var generatedMetadata: [String: [String: JSONValue]] {
        ["openid_credential_issuer": provider.credentialIssuerMetadata,
         "oauth_authorization_server": provider.authorizationServerMetadata]
    }

    var keys: [ServiceKeyDescription] {
        [ServiceKeyDescription(folder: "issuer", purpose: "the PID Provider's IACA root, document signer (mdoc, SD-JWT VC, status lists, signed metadata) and recovery secret")]
    }

    func purge(now: Int64) throws -> Int { try provider.purgeExpired(now: now) }
}
