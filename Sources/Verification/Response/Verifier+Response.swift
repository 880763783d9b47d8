import Cryptography
import JSON
import Store
import Support

/// What the `response_uri` answers the wallet (OpenID4VP 1.0 §8.2): `{}` cross-device, or
/// `{"redirect_uri": ...}` same-device, where the request was made with a `redirect_uri`.
public struct ResponseAcknowledgement: Sendable, Equatable {
    public let redirectURI: String?

    public var json: JSONValue {
        guard let redirectURI else { return .object([:]) }
        return ["redirect_uri": .string(redirectURI)]
    }
}

extension Verifier {
    /// Takes one authorization response: finds its request by `state`, refuses a foreign or
    /// replayed one with 400 and the reason (nothing recorded), verifies every presentation into
    /// a `VerificationReport`, and records the verdict, which the admin API and the result page
    /// then show. A verified answer is acknowledged; a refused one is recorded as `refused` and
    /// answered 400 `invalid_request` naming the first failed check. The wallet's own error
    /// response (§8.5) is recorded as refused and acknowledged.
    public func receiveResponse(form: [(name: String, value: String)]) throws(VerificationError) -> ResponseAcknowledgement {
        let response = try decodeResponse(form: form)
        guard let state = response.state, !state.isEmpty else {
            throw .invalidRequest("state is missing: every request of this verifier carries one (§5.2)")
        }
        let repository = PresentationRequestRepository(database: database)
        let found: PresentationRequestRecord?
        do { found = try repository.find(verifier: entityID, state: state) } catch { throw .store(error) }
        guard let request = found else {
            throw .invalidRequest("no presentation request of this verifier has this state (a foreign or expired response)")
        }
        guard request.status == "pending" else {
            throw .invalidRequest("presentation request \(request.id) was already answered (\(request.status)): a replayed response")
        }
        guard request.expiresAt > clock.now() else {
            throw .invalidRequest("presentation request \(request.id) expired before the response arrived")
        }

        let report = verify(response, for: request)
        var responseCode: String?
        var redirect: String?
        if report.verified, let redirectURI = request.redirectURI {
            // §8.2: the response code ties the redirect to this response, so only the browser the
            // wallet sends back can fetch the result with it.
            let code = Base64URL.encode(SecureRandom.bytes(16))
            responseCode = code
            redirect = redirectURI + "#response_code=" + code
        }
        let taken: Bool
        do {
            taken = try repository.answer(verifier: entityID, id: request.id, status: report.verified ? "verified" : "refused",
                                          result: String(decoding: report.json.bytes, as: UTF8.self), responseCode: responseCode,
                                          now: clock.now())
        } catch { throw .store(error) }
        guard taken else {
            throw .invalidRequest("presentation request \(request.id) was already answered: a replayed response")
        }
        logger.info("presentation request \(request.id) \(report.verified ? "verified" : "refused")")
        if response.error != nil { return ResponseAcknowledgement(redirectURI: nil) }
        guard report.verified else {
            let failed = report.checks.first { !$0.ok }
            throw .invalidRequest("\(failed?.name ?? "response"): \(failed?.detail ?? "refused")")
        }
        return ResponseAcknowledgement(redirectURI: redirect)
    }

    /// The report on one response to `request`.
    func verify(_ response: WalletResponse, for request: PresentationRequestRecord) -> VerificationReport {
        var report = VerificationReport()
        let encrypted = request.responseMode == ResponseMode.directPostJWT.rawValue
        if encrypted != response.encrypted {
            report.fail("response_mode", encrypted
                ? "the request asked for direct_post.jwt; a plain response is refused (HAIP: responses are encrypted)"
                : "the request asked for direct_post; send vp_token and state as form parameters")
            return report
        }
        report.pass("response_mode", encrypted ? "direct_post.jwt, ECDH-ES with \(response.encryption ?? "?") to the verifier's key" : "direct_post")
        if let error = response.error {
            report.fail("wallet_response", "the wallet answered error=\(error)" + (response.errorDescription.map { ": \($0)" } ?? ""))
            return report
        }
        guard let vpToken = response.vpToken else {
            report.fail("vp_token", "neither vp_token nor error in the response (§8.1)")
            return report
        }
        let query: DCQLQuery
        do { query = try DCQLQuery.parse(try JSONValue.parse(Array(request.dcqlQuery.utf8))) } catch {
            report.fail("vp_token", "the stored query does not parse: \(error)")
            return report
        }
        if let unknown = vpToken.keys.sorted().first(where: { id in !query.credentials.contains { $0.id == id } }) {
            report.fail("vp_token", "vp_token answers \(unknown), which the DCQL query does not ask for")
            return report
        }
        if let sets = query.credentialSets {
            // §6.4.2: each required set answered by one of its options; what no option needs may be left out.
            for (index, set) in sets.enumerated() where set.required && !set.options.contains(where: { $0.allSatisfy { vpToken[$0] != nil } }) {
                report.fail("vp_token", "credential set \(index + 1) is required and none of its options is answered: "
                            + set.options.map { $0.joined(separator: " + ") }.joined(separator: " | "))
                return report
            }
            report.pass("credential_sets", "answered: " + vpToken.keys.sorted().joined(separator: ", "))
        }
        var claims: [String: JSONValue] = [:]
        for credential in query.credentials {
            guard let presentations = vpToken[credential.id] else {
                if query.credentialSets != nil { continue }
                report.fail("vp_token", "credential query \(credential.id) is not answered")
                return report
            }
            guard credential.multiple || presentations.count == 1 else {
                report.fail("vp_token", "\(presentations.count) presentations for \(credential.id), which allows one (multiple is false)")
                return report
            }
            var verified: [JSONValue] = []
            for presentation in presentations {
                let result: JSONValue?
                switch credential.format {
                case "dc+sd-jwt": result = checkSDJWT(presentation, query: credential, request: request, report: &report)
                default: result = checkMDoc(presentation, query: credential, request: request, encrypted: encrypted, report: &report)
                }
                guard let result else { return report }
                verified.append(result)
            }
            claims[credential.id] = credential.multiple ? .array(verified) : verified[0]
        }
        report.claims = .object(claims)
        return report
    }

    /// `{"state": "pending" | "verified" | "refused", "checks", "claims"}` of the admin API.
    public func requestResult(_ request: PresentationRequestRecord) -> JSONValue {
        if request.status != "pending", let text = request.result, let stored = try? JSONValue.parse(Array(text.utf8)) {
            return stored
        }
        guard request.expiresAt <= clock.now() else { return ["state": "pending", "checks": [], "claims": [:]] }
        var report = VerificationReport()
        report.fail("response", "no response arrived before the request expired")
        return report.json
    }
}
