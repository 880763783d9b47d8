import Foundation
import HTTP
import JSON
import Logging
import Store
import Support
import XCTest
import Federation
@testable import Trustbed

/// Services as plug-ins: the registry names what an entity file may run, the assembly starts
/// each declared service, refuses route and metadata clashes, merges metadata under the file's
/// own, keeps unchanged services across reloads and purges them all.
final class ServiceAssemblyTests: XCTestCase {
    /// A test-only service: routes and metadata from its declaration, starts and purges counted.
    struct TestService: HostedService {
        let routes: [(HTTPMethod, String)]
        let generatedMetadata: [String: [String: JSONValue]]
        let purged: Locked<Int>
        var keys: [ServiceKeyDescription] { [] }

        func router() -> Router<String> {
            var router = Router<String>()
            for (method, template) in routes { router.add(method, template) { _, _, _ in .json(["ok": true]) } }
            return router
        }

        func purge(now: Int64) throws -> Int {
            purged.withLock { $0 += 1 }
            return 2
        }
    }

    struct TestFactory: ServiceFactory {
        let kind: String
        var displayName: String { "Test \(kind)" }
        let starts = Locked(0)
        let purged = Locked(0)

        /// `{"routes": ["GET /x", ...], "metadata": {type: {...}}}`
        func start(_ declaration: JSONReader, context: ServiceContext) throws -> any HostedService {
            starts.withLock { $0 += 1 }
            let routes = try (declaration.optionalStringArray("routes") ?? []).map { line -> (HTTPMethod, String) in
                let parts = line.split(separator: " ").map(String.init)
                guard parts.count == 2 else { throw EntityFileError(file: context.entityFile, field: "routes", line) }
                return (HTTPMethod(parts[0]), parts[1])
            }
            var metadata: [String: [String: JSONValue]] = [:]
            for (type, value) in declaration.object["metadata"]?.objectValue ?? [:] { metadata[type] = value.objectValue ?? [:] }
            return TestService(routes: routes, generatedMetadata: metadata, purged: purged)
        }
    }

    private let alpha = TestFactory(kind: "alpha")
    private let beta = TestFactory(kind: "beta")

    private func assembly() throws -> ServiceAssembly {
        var c = ServerConfiguration()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("services-\(UUID().uuidString)").path
        c.entitiesDirectory = root + "/Entities"
        c.keysDirectory = root + "/Keys"
        let database = try Database(path: root + ".sqlite")
        var assembly = ServiceAssembly(configuration: c, database: database, clock: ManualClock(1_760_000_000),
                                       logger: Logger(label: "test"), adminToken: "admin", walletProviderTrust: nil)
        assembly.registry = ServiceRegistry([alpha, beta])
        return assembly
    }

    private func entity(_ services: [String: JSONValue], metadata: [String: JSONValue] = [:]) -> HostedEntity {
        HostedEntity(name: "svc", entityID: "http://127.0.0.1:8080/svc", metadata: metadata, services: services)
    }

    func testRegistryNamesWhatEntityFilesMayRun() throws {
        XCTAssertEqual(ServiceRegistry.standard.kinds, ["pid_provider", "verifier", "wallet_provider"])
        XCTAssertEqual(ServiceRegistry.standard.factory("pid_provider")?.displayName, "PID Provider")
        XCTAssertEqual(ServiceRegistry.standard.factory("wallet_provider")?.displayName, "Wallet Provider")
        XCTAssertEqual(ServiceRegistry.standard.factory("verifier")?.displayName, "Verifier")
        XCTAssertEqual(EntityFile.knownServices, Set(ServiceRegistry.standard.kinds))
        XCTAssertEqual(ServiceRegistry([beta, alpha]).kinds, ["alpha", "beta"])
    }

    func testUnknownServiceIsRefusedAtLoadWithTheKnownOnes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("entities-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try #"{"trust_anchor": true, "services": {"wallet_thing": {}}}"#.write(toFile: "\(dir)/ta.json", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try EntityCatalog.load(directory: dir, baseURL: "http://x.test")) { error in
            let error = error as? EntityFileError
            XCTAssertEqual(error?.field, "services.wallet_thing")
            XCTAssertEqual(error?.message, "unknown service (known: pid_provider, verifier, wallet_provider)")
        }
        // The assembly refuses a kind its registry lacks the same way.
        XCTAssertThrowsError(try assembly().assemble([entity(["gamma": [:]])], entityIDs: [:], previous: [:])) { error in
            XCTAssertEqual((error as? EntityFileError)?.field, "services.gamma")
            XCTAssertEqual((error as? EntityFileError)?.message, "unknown service (known: alpha, beta)")
        }
    }

    func testTwoServicesClaimingOnePathAreRefused() throws {
        let assembly = try assembly()
        // Same method and template, parameter names aside.
        let clash = entity(["alpha": ["routes": ["GET /token", "POST /offers/{id}"]],
                            "beta": ["routes": ["GET /other", "POST /offers/{offer}"]]])
        XCTAssertThrowsError(try assembly.assemble([clash], entityIDs: [:], previous: [:])) { error in
            let error = error as? EntityFileError
            XCTAssertEqual(error?.field, "services")
            XCTAssertEqual(error?.message, "services alpha and beta both serve POST /offers/{} on this entity")
            XCTAssertTrue(error?.description.contains("svc.json") == true, "\(String(describing: error))")
        }
        // Another method on the same path is no clash; both routers are mounted.
        let shared = entity(["alpha": ["routes": ["GET /offers/{id}"]], "beta": ["routes": ["POST /offers/{id}"]]])
        let (_, services) = try assembly.assemble([shared], entityIDs: [:], previous: [:])
        XCTAssertEqual(services["http://127.0.0.1:8080/svc"]?.map(\.kind), ["alpha", "beta"])
    }

    func testGeneratedMetadataGoesUnderTheFilesMembers() throws {
        let assembly = try assembly()
        let declared: [String: JSONValue] = [
            "oauth_authorization_server": ["token_endpoint": "https://file.example/token"],
            "federation_entity": ["organization_name": "X"],
        ]
        let e = entity(["alpha": ["metadata": ["oauth_authorization_server": ["token_endpoint": "generated", "issuer": "generated"]]],
                        "beta": ["metadata": ["openid_credential_verifier": ["a": 1]]]], metadata: declared)
        let (entities, _) = try assembly.assemble([e], entityIDs: [:], previous: [:])
        let metadata = entities[0].metadata
        XCTAssertEqual(metadata["oauth_authorization_server"], ["token_endpoint": "https://file.example/token", "issuer": "generated"],
                       "the file's member wins, generated ones fill the rest")
        XCTAssertEqual(metadata["openid_credential_verifier"], ["a": 1])
        XCTAssertEqual(metadata["federation_entity"], ["organization_name": "X"], "types no service generates stay as declared")
        // Two services generating one entity type are refused.
        let both = entity(["alpha": ["metadata": ["oauth_authorization_server": ["a": 1]]],
                           "beta": ["metadata": ["oauth_authorization_server": ["b": 2]]]])
        XCTAssertThrowsError(try assembly.assemble([both], entityIDs: [:], previous: [:])) { error in
            XCTAssertEqual((error as? EntityFileError)?.message,
                           "services alpha and beta both generate oauth_authorization_server metadata on this entity")
        }
    }

    func testReloadKeepsUnchangedServicesAndPurgeReachesEveryOne() throws {
        let assembly = try assembly()
        let first = entity(["alpha": ["routes": ["GET /a"]], "beta": ["routes": ["GET /b"]]])
        let (_, running) = try assembly.assemble([first], entityIDs: [:], previous: [:])
        XCTAssertEqual(alpha.starts.current + beta.starts.current, 2)
        // beta's declaration changes: only beta starts again.
        let second = entity(["alpha": ["routes": ["GET /a"]], "beta": ["routes": ["GET /c"]]])
        let (_, again) = try assembly.assemble([second], entityIDs: [:], previous: running)
        XCTAssertEqual(alpha.starts.current, 1)
        XCTAssertEqual(beta.starts.current, 2)
        let request = HTTPRequest(method: .get, path: "/svc/c")
        XCTAssertEqual(again["http://127.0.0.1:8080/svc"]?[1].router.respond(to: request, path: "/c", context: "svc")?.status, .ok)
        XCTAssertEqual(ServiceAssembly.purge(again, now: 1_760_000_000, logger: Logger(label: "test")), 4)
        XCTAssertEqual(alpha.purged.current + beta.purged.current, 2)
    }
}
