import Federation
import HTTP
import Support

/// One pool for the tests' remote resolves (a pool's threads live as long as the process).
private let testPool = WorkPool(name: "test-remote", threads: 4, queueLimit: 64)

extension FederationHost {
    /// The federation endpoints' answer as a client sees it (a deferred resolve waited for).
    func handle(entityID: String, path: String, request: HTTPRequest) -> HTTPResponse? {
        FederationRoutes(host: self, remoteWork: testPool).respond(entityID: entityID, path: path, request: request)?.resolved()
    }
}
