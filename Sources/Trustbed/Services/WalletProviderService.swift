import Cryptography
import HTTP
import JSON
import WalletProvider

/// `services.wallet_provider`: a mock IT-Wallet Wallet Provider (`WalletProvider`) on the
/// entity, with its keys under `Keys/<name>/wallet-provider/`.
struct WalletProviderFactory: ServiceFactory {
    var kind: String { "wallet_provider" }
    var displayName: String { "Wallet Provider" }

    func start(_ declaration: JSONReader, context: ServiceContext) throws -> any HostedService {
        let config = try WalletProviderConfiguration.parse(declaration)
        let keys = try WalletProviderKeys.loadOrCreate(
            directory: "\(context.keysDirectory)/\(context.entityName)/wallet-provider", provider: context.entityID,
            now: context.clock.now())
        // The Android and Apple roots are read (and watched) here so a bad file fails the start,
        // naming the field; their verifiers take them once they are built (issue 20, item 5b/c).
        var rootFiles: [String: [UInt8]?] = [:]
        for (field, paths) in [("android_roots", config.androidRootFiles), ("apple_roots", config.appleRootFiles)] {
            for path in paths {
                do {
                    let resolved = try context.resolve(path)
                    let content = ServiceAssembly.read(resolved)
                    rootFiles[resolved] = content
                    guard let content else { throw WalletProviderError(.serverError, "cannot read the file") }
                    _ = try Certificate.certificates(pem: String(decoding: content, as: UTF8.self))
                } catch {
                    throw EntityFileError(file: context.entityFile, field: "services.\(kind).\(field)", "\(path): \(error)")
                }
            }
        }
        let provider = WalletProvider(
            entityID: context.entityID, entityName: context.entityName, configuration: config, keys: keys,
            database: context.database, clock: context.clock, logger: context.logger,
            trustAnchors: config.trustAnchors.map { context.entityIDs[$0] ?? $0 }, adminToken: context.adminToken)
        context.logger.info("Wallet Provider \(context.entityID) started")
        return WalletProviderService(provider: provider, watchedFiles: rootFiles)
    }
}

/// A running Wallet Provider as the assembly sees it.
struct WalletProviderService: HostedService {
    let provider: WalletProvider
    let watchedFiles: [String: [UInt8]?]

    func router() -> Router<String> { WalletProviderRoutes(provider: provider).router() }

    var generatedMetadata: [String: [String: JSONValue]] {
        ["wallet_provider": provider.walletProviderMetadata, "federation_entity": provider.federationEntityMetadata]
    }

    var keys: [ServiceKeyDescription] {
        [ServiceKeyDescription(folder: "wallet-provider",
                               purpose: "the Wallet Provider's CA, attestation signer, mock device-maker root and nonce secret")]
    }

    func purge(now: Int64) throws -> Int { try provider.purgeExpired(now: now) }
}
