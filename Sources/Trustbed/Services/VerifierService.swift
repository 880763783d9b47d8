import Cryptography
import Federation
import HTTP
import HTTPClient
import Issuance
import JOSE
import JSON
import Support
import Verification

/// `services.verifier`: a mock OpenID4VP verifier (`Verifier`) on the entity, with its keys
/// under `Keys/<name>/verifier/`.
struct VerifierFactory: ServiceFactory {
    var kind: String { "verifier" }
    var displayName: String { "Verifier" }

    func start(_ declaration: JSONReader, context: ServiceContext) throws -> any HostedService {
        let config = try VerifierConfiguration.parse(declaration)
        let keys = try VerifierKeys.loadOrCreate(directory: "\(context.keysDirectory)/\(context.entityName)/verifier",
                                                 verifier: context.entityID, now: context.clock.now())
        var rootFiles: [String: [UInt8]?] = [:]
        var roots: [Certificate] = []
        for path in config.issuerRootFiles {
            do {
                let resolved = try context.resolve(path)
                let content = ServiceAssembly.read(resolved)
                rootFiles[resolved] = content
                guard let content else { throw VerificationError(.serverError, "cannot read the file") }
                roots += try Certificate.certificates(pem: String(decoding: content, as: UTF8.self))
            } catch {
                throw EntityFileError(file: context.entityFile, field: "services.\(kind).issuer_roots", "\(path): \(error)")
            }
        }
        let anchors = config.trustAnchors.map { context.entityIDs[$0] ?? $0 }
        var issuerTrust: (any CredentialIssuerTrust)?
        var trustChain: (@Sendable () -> [String]?)?
        if let federation = context.walletProviderTrust as? FederationWalletProviderTrust {
            let entityID = context.entityID
            issuerTrust = FederationIssuerTrust(federation: federation, verifierID: entityID)
            trustChain = { WalletProviderFactory.trustChain(of: entityID, host: federation.host(), anchors: anchors) }
        }
        let documents = HostedIssuerDocuments(baseURL: context.baseURL, services: context.hostedServices)
        let verifier = Verifier(
            entityID: context.entityID, entityName: context.entityName, configuration: config, keys: keys,
            database: context.database, clock: context.clock, logger: context.logger, trustAnchors: anchors,
            issuerRoots: roots, adminToken: context.adminToken, issuerTrust: issuerTrust,
            statusLists: documents, iacas: documents, trustChain: trustChain)
        let apple = try appleService(config.apple, context: context, issuerRoots: roots, files: &rootFiles)
        context.logger.info("Verifier \(context.entityID) started")
        return VerifierService(verifier: verifier, watchedFiles: rootFiles, apple: apple)
    }
}

/// A running verifier as the assembly sees it.
struct VerifierService: HostedService {
    let verifier: Verifier
    let watchedFiles: [String: [UInt8]?]
    var apple: AppleIdentityService?

    func router() -> Router<String> { VerifierRoutes(verifier: verifier, apple: apple).router() }

    var generatedMetadata: [String: [String: JSONValue]] { ["openid_credential_verifier": verifier.verifierMetadata] }

    var keys: [ServiceKeyDescription] {
        [ServiceKeyDescription(folder: "verifier",
                               purpose: "the verifier's root, access certificate (request object signing) and response encryption key; "
                                   + "apple/: Apple's identity envelope encryption key and certificate")]
    }

    func purge(now: Int64) throws -> Int { try verifier.purgeExpired(now: now) }
}

/// The verifier's question "is this credential issuer trusted?" answered by the federation: its
/// trust chain must reach one of the configured Trust Anchors (none configured: those the
/// verifier's own authority hints reach). Asked as the PID Provider asks about wallet providers
/// (`FederationWalletProviderTrust.resolvedMetadata`: in process for a Trust Anchor hosted here,
/// within its remote budget otherwise, and kept until the answer expires).
struct FederationIssuerTrust: CredentialIssuerTrust {
    let federation: FederationWalletProviderTrust
    let verifierID: String

    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    func resolvedMetadata(entityID: String, trustAnchors configured: [String]) throws -> (metadata: [String: JSONValue], trustAnchor: String) {
        let trustAnchors = configured.isEmpty ? WalletProviderFactory.reachableAnchors(of: verifierID, host: federation.host()) : configured
        guard !trustAnchors.isEmpty else { throw Refusal(description: "the verifier has no Trust Anchor (configure trust_anchors)") }
        return try federation.resolvedMetadata(entityID: entityID, trustAnchors: trustAnchors)
    }
}

/// Status List Tokens and IACA roots for the verifier: those of a PID Provider hosted here come
/// from the provider in process (a worker must never send HTTP to its own server: when every worker did,
/// none would be left to answer); another URI under this server's origin is not served here;
/// any other is fetched over HTTP(S).
struct HostedIssuerDocuments: StatusListFetcher, IACAFetcher {
    let baseURL: String
    let services: @Sendable () -> [String: [ServiceAssembly.Running]]

    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    func statusListToken(uri: String) throws -> String {
        for running in services().values.joined() {
            guard let pid = running.service as? PIDProviderService else { continue }
            let prefix = pid.provider.urls.issuer + "/status/"
            guard uri.hasPrefix(prefix), let number = Int(uri.dropFirst(prefix.count)) else { continue }
            guard let token = try pid.provider.statusListToken(number: number) else {
                throw Refusal(description: "\(uri): no such status list (answered in process)")
            }
            return token
        }
        if let own = FetchAllowList.origin(baseURL), FetchAllowList.origin(uri) == own {
            throw Refusal(description: "\(uri) is not served here (answered in process: not_found)")
        }
        guard uri.hasPrefix("https://") || uri.hasPrefix("http://") else { throw Refusal(description: "\(uri) is not an http(s) URL") }
        let response = try HTTPClient(timeout: 5, maxBytes: 4 << 20).get(uri, headers: ["Accept: application/statuslist+jwt"])
        guard response.status == 200 else { throw Refusal(description: "\(uri) answered HTTP \(response.status)") }
        return String(decoding: response.body, as: UTF8.self)
    }

    /// `<issuer>/iaca.pem`: the hosted PID Provider's IACA, or the PEM fetched from elsewhere.
    func iacaCertificates(issuer: String) throws -> [Certificate] {
        for running in services().values.joined() {
            guard let pid = running.service as? PIDProviderService, pid.provider.urls.issuer == issuer else { continue }
            return [pid.provider.keys.iaca]
        }
        let url = issuer + "/iaca.pem"
        if let own = FetchAllowList.origin(baseURL), FetchAllowList.origin(url) == own {
            throw Refusal(description: "\(url) is not served here (answered in process: not_found)")
        }
        guard url.hasPrefix("https://") || url.hasPrefix("http://") else { throw Refusal(description: "\(url) is not an http(s) URL") }
        let response = try HTTPClient(timeout: 5, maxBytes: 1 << 20).get(url)
        guard response.status == 200 else { throw Refusal(description: "\(url) answered HTTP \(response.status)") }
        return try Certificate.certificates(pem: String(decoding: response.body, as: UTF8.self))
    }
}
