import Cryptography
import Federation
import HTTP
import JOSE
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
        // The Android and Apple roots are read (and watched: an edit restarts the provider) here,
        // so a bad file fails the start naming the field; none named: the shipped defaults.
        var rootFiles: [String: [UInt8]?] = [:]
        var roots: [String: [Certificate]] = [:]
        for (field, paths) in [("android_roots", config.androidRootFiles), ("apple_roots", config.appleRootFiles),
                               ("pid_issuer_roots", config.pidIssuerRootFiles)] {
            for path in paths {
                do {
                    let resolved = try context.resolve(path)
                    let content = ServiceAssembly.read(resolved)
                    rootFiles[resolved] = content
                    guard let content else { throw WalletProviderError(.serverError, "cannot read the file") }
                    roots[field, default: []] += try Certificate.certificates(pem: String(decoding: content, as: UTF8.self))
                } catch {
                    throw EntityFileError(file: context.entityFile, field: "services.\(kind).\(field)", "\(path): \(error)")
                }
            }
        }
        let anchors = config.trustAnchors.map { context.entityIDs[$0] ?? $0 }
        var trustChain: (@Sendable () -> [String]?)?
        // Issue 21: a PID's issuer is trusted through the same Trust Anchors (in process for a
        // hosted one, kept until the answer expires, as the verifier's issuer check).
        var pidIssuerMetadata: (@Sendable (String) throws -> [String: JSONValue])?
        if let federation = context.walletProviderTrust as? FederationWalletProviderTrust {
            let entityID = context.entityID
            trustChain = { Self.trustChain(of: entityID, host: federation.host(), anchors: anchors) }
            pidIssuerMetadata = { issuer in
                let reachable = anchors.isEmpty ? Self.reachableAnchors(of: entityID, host: federation.host()) : anchors
                return try federation.resolvedMetadata(entityID: issuer, trustAnchors: reachable).metadata
            }
        }
        let provider = WalletProvider(
            entityID: context.entityID, entityName: context.entityName, configuration: config, keys: keys,
            database: context.database, clock: context.clock, logger: context.logger,
            trustAnchors: anchors, adminToken: context.adminToken,
            verifiers: WalletProvider.hardwareVerifiers(androidRoots: roots["android_roots"] ?? [], appleRoots: roots["apple_roots"] ?? [],
                                                        appleAppIDs: config.appleAppIDs),
            trustChain: trustChain, pidIssuerMetadata: pidIssuerMetadata, pidIssuerRoots: roots["pid_issuer_roots"] ?? [])
        context.logger.info("Wallet Provider \(context.entityID) started")
        return WalletProviderService(provider: provider, watchedFiles: rootFiles)
    }
}

extension WalletProviderFactory {
    /// The provider's trust chain, from the resolve response of a Trust Anchor hosted here
    /// (built in process from hosted and cached statements, like the PID Provider's wallet
    /// provider check): the configured `trust_anchors`, else those its authority hints reach.
    /// nil when no hosted Trust Anchor resolves it.
    static func trustChain(of entityID: String, host: FederationHost, anchors configured: [String]) -> [String]? {
        for anchor in configured.isEmpty ? reachableAnchors(of: entityID, host: host) : configured {
            guard host.entity(anchor) != nil, host.isSuperior(anchor),
                  let response = try? host.localResolveResponse(resolver: anchor, subject: entityID, trustAnchors: [anchor], entityTypes: []),
                  let chain = (try? JWS.parseClaims(response))?.claims["trust_chain"]?.stringArray, !chain.isEmpty else { continue }
            return chain
        }
        return nil
    }

    /// The hosted Trust Anchors the entity's authority hints lead to, nearest first.
    static func reachableAnchors(of entityID: String, host: FederationHost) -> [String] {
        var anchors: [String] = []
        var seen: Set<String> = [entityID]
        var level = host.entity(entityID)?.authorityHints ?? []
        while !level.isEmpty {
            var next: [String] = []
            for id in level where seen.insert(id).inserted {
                guard let entity = host.entity(id) else { continue }
                if entity.isTrustAnchor { anchors.append(id) }
                next += entity.authorityHints
            }
            level = next
        }
        return anchors
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
