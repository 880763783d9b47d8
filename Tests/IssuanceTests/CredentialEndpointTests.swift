import Cryptography
import Foundation
import HTTP
import Issuance
import JOSE
import JSON
import OAuth
import SDJWT
import Store
import Support
import XCTest

/// The credential (§8), deferred (§9) and notification (§11) endpoints: through the domain
/// calls, and through the router for what only HTTP shows (status, headers, the access token).
final class CredentialEndpointTests: XCTestCase {
    typealias T = CredentialTestProvider

    private func request(_ body: [String: JSONValue]) -> [UInt8] { JSONValue.object(body).bytes }

    private func proofs(_ provider: PIDProvider, count: Int = 1) throws -> (JSONValue, [PrivateKey]) {
        let nonce = try provider.issueCNonce()
        let keys = try (0..<count).map { _ in try PrivateKey(generatingFor: .ES256) }
        return (["jwt": .array(try keys.map { .string(try T.proof($0, nonce: nonce)) })], keys)
    }

    private func code(_ body: () throws -> Any) -> IssuanceError.Code? {
        do { _ = try body(); return nil } catch { return (error as? IssuanceError)?.codeValue }
    }

    func testBatchIssuanceRecordsEveryCredentialBeforeAnswering() throws {
        let provider = try T.make()
        let (proofs, keys) = try proofs(provider, count: 2)
        let response = try provider.credentialResponse(
            grant: T.grant(), mediaType: "application/json",
            body: request(["credential_configuration_id": "urn:eudi:pid:1", "proofs": proofs, "unknown": "ignored"]))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.contentType, "application/json")
        let json = try JSONValue.parse(response.body)
        XCTAssertEqual(json.bytes, response.body, "the credentials written in directly give the JSON writer's own bytes")
        let credentials = try XCTUnwrap(json["credentials"]?.arrayValue)
        XCTAssertEqual(credentials.count, 2)
        let notificationID = try XCTUnwrap(json["notification_id"]?.stringValue)

        let records = try provider.issuedCredentials(persona: "erika")
        XCTAssertEqual(records.count, 2)
        XCTAssertEqual(Set(records.map(\.keyThumbprint)), Set(keys.map { try! JWK(json: T.jwk($0)).thumbprint() }))
        XCTAssertTrue(records.allSatisfy { $0.notificationID == notificationID && $0.configurationID == "urn:eudi:pid:1" })
        XCTAssertEqual(Set(records.map(\.statusIndex)).count, 2, "each credential has its own status entry")
        // Each SD-JWT names its own entry and its own key.
        for (credential, key) in zip(credentials, keys) {
            let jwt = try XCTUnwrap(credential["credential"]?.stringValue?.split(separator: "~").first)
            let payload = try JWS.parse(String(jwt)).payload()
            XCTAssertEqual(payload["cnf"]?["jwk"], .object(T.jwk(key)))
            let entry = try XCTUnwrap(payload["status"]?["status_list"])
            XCTAssertTrue(records.contains { .string($0.statusURI) == entry["uri"] && .int(Int64($0.statusIndex)) == entry["idx"] })
        }
    }

    /// The c_nonce is consumed in the transaction that records the issuance: of concurrent
    /// requests carrying one nonce exactly one is answered and recorded, the others get
    /// invalid_nonce and leave no record (and, for a deferred persona, no transaction).
    func testConcurrentRequestsWithOneNonceIssueOnce() throws {
        for persona in ["erika", "dave"] {
            let provider = try T.make()
            let nonce = try provider.issueCNonce()
            let bodies = try (0..<20).map { _ in
                request(["credential_configuration_id": "urn:eudi:pid:1",
                         "proofs": ["jwt": [.string(try T.proof(PrivateKey(generatingFor: .ES256), nonce: nonce))]]])
            }
            let outcomes = Locked<[Int: Int]>([:])
            DispatchQueue.concurrentPerform(iterations: bodies.count) { i in
                let status: Int
                do {
                    status = try provider.credentialResponse(grant: T.grant(persona: persona), mediaType: "application/json",
                                                             body: bodies[i]).status
                } catch {
                    status = (error as? IssuanceError)?.codeValue == .invalidNonce ? 400 : -1
                }
                outcomes.withLock { $0[status, default: 0] += 1 }
            }
            let answered = persona == "dave" ? 202 : 200
            XCTAssertEqual(outcomes.read { $0 }, [answered: 1, 400: 19], persona)
            XCTAssertEqual(try provider.issuedCredentials(persona: persona).count, 0 + (persona == "erika" ? 1 : 0), persona)
            XCTAssertFalse(try provider.consumeCNonce(nonce), "the winner consumed the c_nonce")
        }
    }

    func testRequestShapeAndGrantErrors() throws {
        let provider = try T.make()
        let grant = T.grant()
        func send(_ body: [String: JSONValue], grant: AccessGrant = grant, mediaType: String = "application/json") -> IssuanceError.Code? {
            code { try provider.credentialResponse(grant: grant, mediaType: mediaType, body: self.request(body)) }
        }
        XCTAssertEqual(send(["credential_configuration_id": "no.such", "proofs": try proofs(provider).0]), .unknownCredentialConfiguration)
        XCTAssertEqual(send(["credential_configuration_id": "eu.europa.ec.eudi.pid.1", "proofs": try proofs(provider).0]),
                       .insufficientScope, "the token grants the SD-JWT configuration only (RFC 6750 §3.1)")
        XCTAssertEqual(send(["proofs": try proofs(provider).0]), .invalidCredentialRequest)
        XCTAssertEqual(send(["credential_configuration_id": "urn:eudi:pid:1", "credential_identifier": "x",
                             "proofs": try proofs(provider).0]), .invalidCredentialRequest)
        XCTAssertEqual(send(["credential_configuration_id": 7]), .invalidCredentialRequest)
        XCTAssertEqual(send(["credential_configuration_id": "urn:eudi:pid:1"]), .invalidProof, "proofs missing")
        XCTAssertEqual(send(["credential_configuration_id": "urn:eudi:pid:1",
                             "proof": ["proof_type": "jwt", "jwt": "a.b.c"]]), .invalidProof, "the singular proof is gone in 1.0")
        XCTAssertEqual(send(["credential_configuration_id": "urn:eudi:pid:1", "proofs": ["di_vp": ["x"]]]), .invalidProof)
        XCTAssertEqual(send(["credential_configuration_id": "urn:eudi:pid:1", "proofs": ["jwt": "a.b.c"]]), .invalidCredentialRequest)
        XCTAssertEqual(send(["credential_configuration_id": "urn:eudi:pid:1", "proofs": try proofs(provider).0],
                            mediaType: "text/plain"), .invalidCredentialRequest)
        XCTAssertEqual(code { try provider.credentialResponse(grant: grant, mediaType: "application/json", body: Array("[1]".utf8)) },
                       .invalidCredentialRequest)
        // credential_identifiers in the token: only credential_identifier is accepted.
        let withIDs = T.grant(identifiers: ["pid-sd": "urn:eudi:pid:1"])
        XCTAssertEqual(send(["credential_configuration_id": "urn:eudi:pid:1", "proofs": try proofs(provider).0], grant: withIDs),
                       .invalidCredentialRequest)
        XCTAssertEqual(send(["credential_identifier": "nope", "proofs": try proofs(provider).0], grant: withIDs),
                       .unknownCredentialIdentifier)
        XCTAssertNil(send(["credential_identifier": "pid-sd", "proofs": try proofs(provider).0], grant: withIDs))
        XCTAssertEqual(send(["credential_identifier": "pid-sd", "proofs": try proofs(provider).0]), .invalidCredentialRequest)
        XCTAssertEqual(try provider.issuedCredentials(persona: nil).count, 1, "only the one good request issued")
    }

    func testMdocIsIssuedWithItsStatusEntry() throws {
        let provider = try T.make()
        let response = try provider.credentialResponse(
            grant: T.grant(configurations: ["eu.europa.ec.eudi.pid.1"]), mediaType: "application/json",
            body: request(["credential_configuration_id": "eu.europa.ec.eudi.pid.1", "proofs": try proofs(provider).0]))
        XCTAssertEqual(response.status, 200)
        let credential = try XCTUnwrap(JSONValue.parse(response.body)["credentials"]?.arrayValue?.first?["credential"]?.stringValue)
        XCTAssertNotNil(Base64URL.decode(credential))
        XCTAssertEqual(try provider.issuedCredentials(persona: "erika").first?.configurationID, "eu.europa.ec.eudi.pid.1")
    }

    func testDeferredIssuanceIsDeliveredOnceWhenReady() throws {
        let clock = ManualClock(T.start)
        let provider = try T.make(clock: clock)
        let grant = T.grant(persona: "dave")
        let first = try provider.credentialResponse(
            grant: grant, mediaType: "application/json",
            body: request(["credential_configuration_id": "urn:eudi:pid:1", "proofs": try proofs(provider, count: 2).0]))
        XCTAssertEqual(first.status, 202)
        let pending = try JSONValue.parse(first.body)
        let id = try XCTUnwrap(pending["transaction_id"]?.stringValue)
        XCTAssertEqual(pending["interval"], 5)
        XCTAssertNil(pending["credentials"])
        XCTAssertTrue(try provider.issuedCredentials(persona: "dave").isEmpty, "nothing is issued before delivery")

        let ask = request(["transaction_id": .string(id)])
        clock.advance(2)
        let early = try provider.deferredCredentialResponse(grant: grant, mediaType: "application/json", body: ask)
        XCTAssertEqual(early.status, 202)
        XCTAssertEqual(try JSONValue.parse(early.body), ["transaction_id": .string(id), "interval": 3])

        XCTAssertEqual(code { try provider.deferredCredentialResponse(grant: T.grant(persona: "dave", tokenHash: "another-token"),
                                                                       mediaType: "application/json", body: ask) },
                       .invalidTransactionID, "only the token that asked may collect")
        clock.advance(3)
        let ready = try provider.deferredCredentialResponse(grant: grant, mediaType: "application/json", body: ask)
        XCTAssertEqual(ready.status, 200)
        let delivered = try JSONValue.parse(ready.body)
        XCTAssertEqual(delivered["credentials"]?.arrayValue?.count, 2)
        XCTAssertNotNil(delivered["notification_id"]?.stringValue)
        XCTAssertEqual(try provider.issuedCredentials(persona: "dave").count, 2)
        XCTAssertEqual(code { try provider.deferredCredentialResponse(grant: grant, mediaType: "application/json", body: ask) },
                       .invalidTransactionID, "single delivery")
        XCTAssertEqual(code { try provider.deferredCredentialResponse(grant: grant, mediaType: "application/json",
                                                                       body: self.request(["transaction_id": "made-up"])) },
                       .invalidTransactionID)
        XCTAssertEqual(code { try provider.deferredCredentialResponse(grant: grant, mediaType: "application/json",
                                                                       body: self.request([:])) },
                       .invalidCredentialRequest)
    }

    func testNotification() throws {
        let provider = try T.make()
        let response = try provider.credentialResponse(
            grant: T.grant(), mediaType: "application/json",
            body: request(["credential_configuration_id": "urn:eudi:pid:1", "proofs": try proofs(provider).0]))
        let id = try XCTUnwrap(JSONValue.parse(response.body)["notification_id"]?.stringValue)
        func notify(_ body: [String: JSONValue], grant: AccessGrant = T.grant()) -> IssuanceError.Code? {
            code { try provider.notify(grant: grant, mediaType: "application/json", body: self.request(body)) }
        }
        XCTAssertNil(notify(["notification_id": .string(id), "event": "credential_accepted", "event_description": "stored"]))
        XCTAssertNil(notify(["notification_id": .string(id), "event": "credential_accepted"]), "idempotent")
        XCTAssertEqual(notify(["notification_id": "unknown", "event": "credential_accepted"]), .invalidNotificationID)
        XCTAssertEqual(notify(["notification_id": .string(id), "event": "credential_accepted"], grant: T.grant(persona: "dave")),
                       .invalidNotificationID, "another persona's notification id is unknown to this grant")
        XCTAssertEqual(notify(["notification_id": .string(id), "event": "credential_stored"]), .invalidNotificationRequest)
        XCTAssertEqual(notify(["event": "credential_accepted"]), .invalidNotificationRequest)
        XCTAssertEqual(notify(["notification_id": .string(id), "event": "credential_failure", "event_description": "bad \"quote\""]),
                       .invalidNotificationRequest)
        XCTAssertNil(notify(["notification_id": .string(id), "event": "credential_deleted"]))
        let stored = try XCTUnwrap(IssuedCredentialRepository(database: provider.database).list(issuer: T.issuer, persona: "erika").first)
        XCTAssertEqual(stored.notificationEvent, "credential_deleted")
    }

    // MARK: Through the router

    private func send(_ router: Router<String>, _ method: HTTPMethod, _ path: String, headers: [String: String] = [:],
                      body: [UInt8] = []) -> HTTPResponse {
        let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
        let request = HTTPRequest(method: method, path: "/pid-provider" + parts[0], rawQuery: parts.count > 1 ? parts[1] : nil,
                                  headers: headers, body: body)
        return router.respond(to: request, path: Substring(parts[0]), context: "pid-provider") ?? HTTPResponse(status: .notFound)
    }

    /// A Bearer access token stored as the token endpoint stores one (by its SHA-256).
    private func bearer(_ provider: PIDProvider, persona: String = "erika") throws -> String {
        let token = PIDProvider.randomToken()
        try TokenRepository(database: provider.database).insert(TokenRecord(
            tokenHash: Base64URL.encode(Digest.sha256(Array(token.utf8))), issuer: T.issuer, clientID: nil, persona: persona,
            grant: #"{"credential_configuration_ids":["urn:eudi:pid:1"],"credential_identifiers":{}}"#, dpopJKT: nil,
            issuedAt: T.start, expiresAt: T.start + 3_600))
        return token
    }

    func testRoutesNonceCredentialNotificationAndStatus() throws {
        let provider = try T.make()
        let router = IssuanceRoutes(provider: provider).router()
        let nonceResponse = send(router, .post, "/nonce")
        XCTAssertEqual(nonceResponse.status, .ok)
        XCTAssertEqual(nonceResponse.header("cache-control"), "no-store")
        XCTAssertNil(nonceResponse.header("access-control-allow-origin"))
        let nonce = try XCTUnwrap(JSONValue.parse(nonceResponse.body)["c_nonce"]?.stringValue)
        XCTAssertEqual(send(router, .get, "/nonce").status, .methodNotAllowed)

        let body = request(["credential_configuration_id": "urn:eudi:pid:1",
                            "proofs": ["jwt": [.string(try T.proof(PrivateKey(generatingFor: .ES256), nonce: nonce))]]])
        let anonymous = send(router, .post, "/credential", headers: ["Content-Type": "application/json"], body: body)
        XCTAssertEqual(anonymous.status, .unauthorized)
        XCTAssertEqual(anonymous.header("www-authenticate"), "Bearer", "RFC 6750 §3.1: no error code without credentials")
        let basic = send(router, .post, "/credential",
                         headers: ["Content-Type": "application/json", "Authorization": "Basic Zm9vOmJhcg=="], body: body)
        XCTAssertEqual(basic.status, .unauthorized)
        XCTAssertEqual(basic.header("www-authenticate"), "Bearer", "an unsupported scheme is no authentication")

        let token = try bearer(provider)
        let issued = send(router, .post, "/credential",
                          headers: ["Content-Type": "application/json; charset=utf-8", "Authorization": "Bearer \(token)"], body: body)
        XCTAssertEqual(issued.status, .ok)
        // A valid token for another configuration: 403 insufficient_scope (OpenID4VCI §8.3.1.1, RFC 6750 §3.1).
        let mdocBody = request(["credential_configuration_id": "eu.europa.ec.eudi.pid.1",
                                "proofs": ["jwt": [.string(try T.proof(PrivateKey(generatingFor: .ES256),
                                                                       nonce: try provider.issueCNonce()))]]])
        let uncovered = send(router, .post, "/credential",
                             headers: ["Content-Type": "application/json", "Authorization": "Bearer \(token)"], body: mdocBody)
        XCTAssertEqual(uncovered.status, .forbidden)
        XCTAssertEqual(try JSONValue.parse(uncovered.body)["error"], "insufficient_scope")
        XCTAssertEqual(uncovered.header("www-authenticate")?.hasPrefix(#"Bearer error="insufficient_scope", error_description=""#), true,
                       uncovered.header("www-authenticate") ?? "no challenge")
        XCTAssertEqual(issued.header("cache-control"), "no-store")
        XCTAssertEqual(issued.header("content-type"), "application/json")
        let notificationID = try XCTUnwrap(JSONValue.parse(issued.body)["notification_id"]?.stringValue)
        let replay = send(router, .post, "/credential",
                          headers: ["Content-Type": "application/json", "Authorization": "Bearer \(token)"], body: body)
        XCTAssertEqual(replay.status, .badRequest)
        XCTAssertEqual(try JSONValue.parse(replay.body)["error"], "invalid_nonce")

        let notified = send(router, .post, "/notification",
                            headers: ["Content-Type": "application/json", "Authorization": "Bearer \(token)"],
                            body: request(["notification_id": .string(notificationID), "event": "credential_accepted"]))
        XCTAssertEqual(notified.status, .noContent)

        // Admin: list, change, unknown id, wrong token.
        let admin = ["Authorization": "Bearer admin-secret", "Content-Type": "application/json"]
        let listed = send(router, .get, "/admin/credentials?persona=erika", headers: admin)
        XCTAssertEqual(listed.status, .ok)
        let record = try XCTUnwrap(JSONValue.parse(listed.body)["credentials"]?.arrayValue?.first)
        XCTAssertEqual(record["persona"], "erika")
        XCTAssertEqual(record["status"], "valid")
        XCTAssertEqual(record["credential_configuration_id"], "urn:eudi:pid:1")
        XCTAssertEqual(record["status_list"]?["uri"], .string(T.issuer + "/status/1"))
        XCTAssertNotNil(record["status_list"]?["idx"]?.intValue)
        XCTAssertNotNil(record["issued_at"]?.intValue)
        XCTAssertNotNil(record["expires_at"]?.intValue)
        let id = try XCTUnwrap(record["id"]?.stringValue)
        let changed = send(router, .post, "/admin/credentials/\(id)/status", headers: admin, body: Array(#"{"status":"suspended"}"#.utf8))
        XCTAssertEqual(changed.status, .ok)
        XCTAssertEqual(try JSONValue.parse(changed.body)["status"], "suspended")
        XCTAssertEqual(send(router, .post, "/admin/credentials/nope/status", headers: admin,
                            body: Array(#"{"status":"valid"}"#.utf8)).status, .notFound)
        let bad = send(router, .post, "/admin/credentials/\(id)/status", headers: admin, body: Array(#"{"status":"revoked"}"#.utf8))
        XCTAssertEqual(bad.status, .badRequest)
        XCTAssertEqual(try JSONValue.parse(bad.body)["error"], "invalid_request")
        XCTAssertEqual(send(router, .get, "/admin/credentials", headers: ["Authorization": "Bearer wrong"]).status, .unauthorized)
        XCTAssertTrue(try JSONValue.parse(send(router, .get, "/admin/credentials?persona=dave", headers: admin).body)["credentials"]?
            .arrayValue?.isEmpty == true)

        let list = send(router, .get, "/status/1")
        XCTAssertEqual(list.status, .ok)
        XCTAssertEqual(list.header("content-type"), "application/statuslist+jwt")
        XCTAssertEqual(list.header("access-control-allow-origin"), "*")
        for missing in ["/status/2", "/status/0", "/status/x", "/status/99999999999999"] {
            XCTAssertEqual(send(router, .get, missing).status, .notFound, missing)
        }
    }
}
