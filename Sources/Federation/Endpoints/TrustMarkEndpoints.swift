import HTTP
import JSON

/// HTTP handlers of the trust mark endpoints (sections 8.4 to 8.6) and the historical keys
/// endpoint (section 8.7): parse, ask the host, render.
extension FederationHost {
    /// GET with exactly one `trust_mark_type` and one `sub`.
    public func handleTrustMark(_ entityID: String, _ req: HTTPRequest) -> HTTPResponse {
        // Not reusable: the revocation check must run on every request.
        serve(reusable: false) { () throws(FederationError) in
            let q = QueryParameters(req)
            return try signedTrustMark(issuer: entityID, type: q.single("trust_mark_type"), subject: q.single("sub"))
        }
    }

    /// POST of an `application/x-www-form-urlencoded` body with exactly one `trust_mark`. The
    /// spec allows only POST here (section 8.4.1), so any other method is `invalid_request`.
    public func handleTrustMarkStatus(_ entityID: String, _ req: HTTPRequest) -> HTTPResponse {
        respond(FederationType.trustMarkStatusResponse) { () throws(FederationError) in
            guard req.method == "POST" else {
                throw .invalidRequest("the trust mark status request must be a POST with an application/x-www-form-urlencoded body")
            }
            guard let form = req.formParameters() else {
                throw .invalidRequest("the body must be application/x-www-form-urlencoded")
            }
            let marks = form.filter { $0.name == "trust_mark" }.map(\.value)
            guard let mark = marks.first, !mark.isEmpty else { throw .invalidRequest("trust_mark is required") }
            guard marks.count == 1 else { throw .invalidRequest("trust_mark must appear once") }
            return try trustMarkStatus(issuer: entityID, trustMark: mark)
        }
    }

    /// GET with exactly one `trust_mark_type` and at most one `sub`; a JSON array of entity IDs.
    public func handleTrustMarkList(_ entityID: String, _ req: HTTPRequest) -> HTTPResponse {
        do {
            let q = QueryParameters(req)
            let type = try q.single("trust_mark_type")
            let sub = try q.optional("sub")
            return .json(JSONValue(try trustMarkedEntities(issuer: entityID, type: type, subject: sub)))
        } catch {
            if error.status >= 500 { logger.error("trust mark list failed: \(error)") }
            return error.response
        }
    }

    public func handleHistoricalKeys(_ entityID: String, _ req: HTTPRequest) -> HTTPResponse {
        serve { () throws(FederationError) in try signedHistoricalKeys(of: entityID) }
    }
}
