import Foundation
import HTTP
import Issuance
import JSON
import Logging
import OAuth
import Store
import Support

/// What a service is started with: the entity it runs on and what the server shares with every
/// service (database, clock, logger, admin token, wallet provider trust).
struct ServiceContext: Sendable {
    let entityID: String
    /// The entity's file name without `.json`: its `Keys/` folder is `keysDirectory/entityName`.
    let entityName: String
    /// The entity's file, for error messages.
    let entityFile: String
    let entitiesDirectory: String
    let keysDirectory: String
    /// Entity IDs by entity name, so a declaration may name other entities by file name.
    let entityIDs: [String: String]
    let database: Database
    let clock: Clock
    let logger: Logger
    let adminToken: String
    let walletProviderTrust: WalletProviderTrust?
    /// The server's base URL: its origin is answered in process, never over HTTP to itself.
    var baseURL: String = ""
    /// The services running now (see `ServiceAssembly.hostedServices`).
    var hostedServices: @Sendable () -> [String: [ServiceAssembly.Running]] = { [:] }

    /// A file a service names, relative to `Entities/`; absolute paths and `..` are refused so
    /// an entity file cannot reach outside its folder.
    func resolve(_ relative: String) throws -> String {
        guard !relative.hasPrefix("/"), !relative.split(separator: "/").contains("..") else {
            throw ServiceFileError(path: relative)
        }
        return "\(entitiesDirectory)/\(relative)"
    }

    /// The JSON of a file a service names (personas, ...).
    func readJSON(_ relative: String) throws -> JSONValue {
        try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: try resolve(relative)))))
    }
}

struct ServiceFileError: Error, CustomStringConvertible {
    let path: String
    var description: String { "\(path): files must be named relative to the entities folder, without '..'" }
}

/// One kind of service an entity file may name under `services`: its name there, and how a
/// declaration (the JSON object under that name, read with its path for errors) becomes a
/// running service.
protocol ServiceFactory: Sendable {
    /// The member of `services` that declares it, e.g. `pid_provider`.
    var kind: String { get }
    /// A short name for logs and messages ("PID Provider").
    var displayName: String { get }

    /// Parses `declaration` and starts the service; throws naming the bad field.
    func start(_ declaration: JSONReader, context: ServiceContext) throws -> any HostedService
}

/// The services an entity file may name, by kind. `standard` is what the server runs; tests
/// build their own with test-only services.
struct ServiceRegistry: Sendable {
    let factories: [any ServiceFactory]

    init(_ factories: [any ServiceFactory]) {
        precondition(Set(factories.map(\.kind)).count == factories.count, "two service factories share a kind")
        self.factories = factories
    }

    /// Every service the server knows. A new service adds its factory here.
    static let standard = ServiceRegistry([PIDProviderFactory(), WalletProviderFactory(), VerifierFactory()])

    var kinds: [String] { factories.map(\.kind).sorted() }

    func factory(_ kind: String) -> (any ServiceFactory)? { factories.first { $0.kind == kind } }
}
