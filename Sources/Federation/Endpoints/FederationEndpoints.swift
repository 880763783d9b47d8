import HTTP
import JSON

extension FederationHost {
    /// Dispatches a request for `path` (the part of the URL after the entity ID) to the federation
    /// endpoint the entity serves there; nil when it serves none, so the caller answers 404.
    public func handle(entityID: String, path: String, request: HTTPRequest) -> HTTPResponse? {
        if path == wellKnownFederationPath {
            return serve { () throws(FederationError) in try signedEntityConfiguration(of: entityID) }
        }
        guard path.hasPrefix("/"), let endpoint = FederationEndpoint(rawValue: String(path.dropFirst())),
              endpoints(of: entityID).contains(endpoint) else { return nil }
        switch endpoint {
        case .fetch: return handleFetch(entityID, request)
        case .list: return handleList(entityID, request)
        case .resolve: return handleResolve(entityID, request)
        case .trustMark: return handleTrustMark(entityID, request)
        case .trustMarkStatus: return handleTrustMarkStatus(entityID, request)
        case .trustMarkList: return handleTrustMarkList(entityID, request)
        case .historicalKeys: return handleHistoricalKeys(entityID, request)
        }
    }

    func handleFetch(_ entityID: String, _ req: HTTPRequest) -> HTTPResponse {
        serve { () throws(FederationError) in
            let sub = try QueryParameters(req).single("sub")
            return try signedSubordinateStatement(issuer: entityID, subject: sub)
        }
    }

    func handleList(_ entityID: String, _ req: HTTPRequest) -> HTTPResponse {
        do {
            let q = QueryParameters(req)
            // Section 8.2.1: a filter the responder does not support is an error, not silently ignored.
            try q.rejectUnknown(allowed: ["entity_type", "trust_marked", "trust_mark_type", "intermediate"])
            let filter = SubordinateListFilter(
                entityTypes: q.all("entity_type"),
                trustMarked: try q.bool("trust_marked") ?? false,
                trustMarkType: try q.optional("trust_mark_type"),
                intermediate: try q.bool("intermediate") ?? false)
            // Depends only on the host, which is replaced (and the server's memo cleared) on change.
            return HTTPResponse.json(JSONValue(try listSubordinates(of: entityID, filter: filter))).reusable(until: now() + 60)
        } catch {
            return error.response
        }
    }

    func handleResolve(_ entityID: String, _ req: HTTPRequest) -> HTTPResponse {
        serve { () throws(FederationError) in
            let q = QueryParameters(req)
            let sub = try q.single("sub")
            let anchors = q.all("trust_anchor")
            guard !anchors.isEmpty else { throw .invalidRequest("trust_anchor is required") }
            return try signedResolveResponse(resolver: entityID, subject: sub, trustAnchors: anchors, entityTypes: q.all("entity_type"))
        }
    }

    /// Runs `produce` and serves its fresh (uncached) JWT with the media type of `typ`, or the
    /// error it threw.
    func respond(_ typ: String, _ produce: () throws(FederationError) -> String) -> HTTPResponse {
        do {
            return .jwt(try produce(), contentType: FederationType.contentType(typ))
        } catch {
            if error.status >= 500 { logger.error("federation endpoint failed: \(error)") }
            return error.response
        }
    }

    /// Serves a cached signed JWT through its prepared response, or the error producing it threw.
    /// A `reusable` answer depends on nothing but the request's path, query and host, so the
    /// HTTP server may give it again to an identical request while the cache would.
    func serve(reusable: Bool = true, _ produce: () throws(FederationError) -> SignedJWT) -> HTTPResponse {
        do {
            let signed = try produce()
            return reusable ? signed.response.reusable(until: signed.refreshAt) : signed.response
        } catch {
            if error.status >= 500 { logger.error("federation endpoint failed: \(error)") }
            return error.response
        }
    }
}

/// Query parameters with the spec's rules: required ones exactly once, unknown ones reported.
struct QueryParameters {
    let request: HTTPRequest
    init(_ request: HTTPRequest) { self.request = request }

    func all(_ name: String) -> [String] { request.queryValues(name) }

    func single(_ name: String) throws(FederationError) -> String {
        let values = request.queryValues(name)
        guard !values.isEmpty, !values[0].isEmpty else { throw .invalidRequest("\(name) is required") }
        guard values.count == 1 else { throw .invalidRequest("\(name) must appear once") }
        return values[0]
    }

    func optional(_ name: String) throws(FederationError) -> String? {
        let values = request.queryValues(name)
        guard values.count <= 1 else { throw .invalidRequest("\(name) must appear at most once") }
        return values.first
    }

    func bool(_ name: String) throws(FederationError) -> Bool? {
        guard let v = try optional(name) else { return nil }
        switch v {
        case "true": return true
        case "false": return false
        default: throw .invalidRequest("\(name) must be true or false")
        }
    }

    func rejectUnknown(allowed: Set<String>) throws(FederationError) {
        if let unknown = request.queryNames.subtracting(allowed).sorted().first {
            throw .unsupportedParameter("parameter \(unknown) is not supported")
        }
    }
}
