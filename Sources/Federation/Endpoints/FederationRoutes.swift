import HTTP
import JSON
import Support

/// The federation endpoints (OpenID Federation 1.0 section 8) as routes: parse the request, ask
/// the host, render. Every entity mounts the router for what it serves; the routers are built
/// once per host and shared by all its entities, so 100,000 mounts cost four routers (and four
/// arrays of them), not 800,000 routes. The context is the entity ID.
///
/// Unknown query and form parameters are ignored everywhere, as section 8 says; a known one
/// given twice, empty when required, or malformed is `invalid_request`.
public struct FederationRoutes: Sendable {
    /// Every entity: its configuration and historical keys.
    let entity: Router<String>
    /// Superiors (Trust Anchors and entities with subordinates): fetch, list, resolve.
    let superior: Router<String>
    /// Trust mark issuers: trust mark, status, list.
    let issuer: Router<String>
    /// What `routers(for:)` hands out: for each combination of roles one router with all their
    /// routes, in an array built once. A router per role would cost a failed lookup in the
    /// entity router on every fetch, and an array per mount megabytes at 100,000 entities
    /// (measured: see docs/performance.md).
    private let entityOnly: [Router<String>]
    private let entityAndSuperior: [Router<String>]
    private let entityAndIssuer: [Router<String>]
    private let allRoles: [Router<String>]
    private let host: FederationHost

    /// `remoteWork`: where resolves that must wait on other hosts run, never on an HTTP worker.
    public init(host: FederationHost, remoteWork: WorkPool) {
        self.host = host
        var entity = Router<String>()
        entity.get(wellKnownFederationPath, memo: true) { id, _, _ in
            try Self.jwt(host.signedEntityConfiguration(of: id))
        }
        entity.get(FederationEndpoint.historicalKeys.path, memo: true) { id, _, _ in
            try Self.jwt(host.signedHistoricalKeys(of: id))
        }

        var superior = Router<String>()
        superior.get(FederationEndpoint.fetch.path, memo: true) { id, request, _ in
            try Self.jwt(host.signedSubordinateStatement(issuer: id, subject: request.parameters.single("sub")))
        }
        superior.get(FederationEndpoint.list.path, memo: true) { id, request, _ in
            let q = request.parameters
            let filter = SubordinateListFilter(
                entityTypes: q.all("entity_type"), trustMarked: try q.bool("trust_marked") ?? false,
                trustMarkType: try q.optional("trust_mark_type"), intermediate: try q.bool("intermediate") ?? false)
            // Depends only on the host, which is replaced (and the memo cleared) on any change.
            return HTTPResponse.json(JSONValue(try host.listSubordinates(of: id, filter: filter))).reusable(until: host.now() + 60)
        }
        superior.get(FederationEndpoint.resolve.path, memo: true) { id, request, _ in
            try Self.resolve(host: host, resolver: id, request: request, pool: remoteWork)
        }

        var issuer = Router<String>()
        // Not memoized: the revocation check must run on every request.
        issuer.get(FederationEndpoint.trustMark.path) { id, request, _ in
            let q = request.parameters
            let signed = try host.signedTrustMark(issuer: id, type: q.single("trust_mark_type"), subject: q.single("sub"))
            return .jwt(signed.compact, contentType: FederationType.contentType(signed.type))
        }
        // Section 8.4.1: POST with an application/x-www-form-urlencoded body; other methods get 405.
        issuer.post(FederationEndpoint.trustMarkStatus.path) { id, request, _ in
            let mark = try request.formBody().single("trust_mark")
            return .jwt(try host.trustMarkStatus(issuer: id, trustMark: mark),
                        contentType: FederationType.contentType(FederationType.trustMarkStatusResponse))
        }
        issuer.get(FederationEndpoint.trustMarkList.path) { id, request, _ in
            let q = request.parameters
            return .json(JSONValue(try host.trustMarkedEntities(issuer: id, type: q.single("trust_mark_type"), subject: q.optional("sub"))))
        }
        self.entity = entity
        self.superior = superior
        self.issuer = issuer
        entityOnly = [entity]
        entityAndSuperior = [Router(merging: [entity, superior])]
        entityAndIssuer = [Router(merging: [entity, issuer])]
        allRoles = [Router(merging: [entity, superior, issuer])]
    }

    /// The routers an entity mounts, per the endpoints the host says it serves (see `FederationHost.endpoints(of:)`).
    public func routers(for entityID: String) -> [Router<String>] {
        switch (host.isSuperior(entityID), host.entity(entityID)?.issuesTrustMarks == true) {
        case (false, false): return entityOnly
        case (true, false): return entityAndSuperior
        case (false, true): return entityAndIssuer
        case (true, true): return allRoles
        }
    }

    /// A cached signed JWT as a reusable answer: an identical request within the second may get
    /// it again from the server's memo, never past the time the cache would re-sign it. Built
    /// on an answer made once per JWT type with the headers of the routes' policy (all these
    /// routes are `.publicRead`), so only the body is new.
    static func jwt(_ signed: SignedJWT) -> HTTPResponse {
        let body = Array(signed.compact.utf8)
        // Each case calls `replacingBody` on the shared answer itself: one copy of it, where a
        // local `head` assigned first would make a second.
        let response: HTTPResponse
        switch signed.type {
        case FederationType.entityStatement: response = entityStatementHead.replacingBody(body)
        case FederationType.resolveResponse: response = resolveResponseHead.replacingBody(body)
        default: response = HTTPResponse.jwt("", contentType: FederationType.contentType(signed.type)).applying(.publicRead).replacingBody(body)
        }
        return response.reusable(until: signed.refreshAt)
    }

    private static let entityStatementHead = HTTPResponse.jwt("", contentType: FederationType.contentType(FederationType.entityStatement))
        .applying(.publicRead)
    private static let resolveResponseHead = HTTPResponse.jwt("", contentType: FederationType.contentType(FederationType.resolveResponse))
        .applying(.publicRead)

    /// Section 8.3. A chain made only of statements hosted here (or cached) is answered on the
    /// worker thread; one that needs another host is handed to `pool` and the connection is
    /// suspended meanwhile, so a slow or dead host ties up a pool thread, never an HTTP worker.
    /// A full pool answers 503 at once rather than queueing without end.
    static func resolve(host: FederationHost, resolver: String, request: HTTPRequest, pool: WorkPool) throws -> HTTPResponse {
        let q = request.parameters
        let subject = try q.single("sub")
        let anchors = q.all("trust_anchor").filter { !$0.isEmpty }
        guard !anchors.isEmpty else { throw FederationError.invalidRequest("trust_anchor is required") }
        let types = q.all("entity_type")
        if let local = try host.localSignedResolveResponse(resolver: resolver, subject: subject, trustAnchors: anchors, entityTypes: types) {
            return jwt(local)
        }
        return .deferred { complete in
            let queued = pool.submit {
                complete { jwt(try host.signedResolveResponse(resolver: resolver, subject: subject, trustAnchors: anchors, entityTypes: types)) }
            }
            if !queued {
                complete(FederationError.temporarilyUnavailable("too many resolves are waiting on other hosts; retry shortly").response)
            }
        }
    }
}

extension FederationRoutes {
    /// The answer of `entityID`'s federation endpoints for `path` (the part after the entity ID),
    /// or nil when none serves it: for tests and tools that route without a `Site`.
    public func respond(entityID: String, path: String, request: HTTPRequest) -> HTTPResponse? {
        for router in routers(for: entityID) {
            if let response = router.respond(to: request, path: Substring(path), context: entityID) { return response }
        }
        return nil
    }
}
