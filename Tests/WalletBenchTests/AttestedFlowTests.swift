import Foundation
import HTTPClient
import JOSE
import JSON
import Support
import Wallet
@testable import WalletBench
import XCTest

/// `--flow pid` (issue 20, Benchmark): the attested HAIP flow against a stub issuer and Wallet
/// Provider. The thread registers and is attested once; each flow then authenticates with the
/// attestation and a PoP, uses DPoP, and carries the provider's key attestation of its fresh
/// proof keys, bound to the issuer's c_nonce.
final class AttestedFlowTests: XCTestCase {
    static let issuer = "http://issuer.test"
    static let provider = "http://wp.test/wp"

    func testSetupOnceThenEveryFlowIsAttested() throws {
        let stub = HAIPStub()
        let http = try WalletHTTP(transport: stub)
        let setup = IssuanceSetup(context: try Self.context(), configuration: try Self.configuration(), adminToken: "admin",
                                  persona: "erika", dpop: false, batch: 2, keys: [], verifyEvery: 0, acknowledged: nil)
        let worker = try AttestedIssuanceWorker(setup: setup, http: http, provider: WalletProviderClient(provider: Self.provider, http: http),
                                                tag: "t-0")
        // Set-up: a registration and one wallet attestation, before any flow.
        XCTAssertEqual(stub.paths, ["GET /wp/nonce", "POST /wp/dev/key-attestation", "POST /wp/wallet-instance", "GET /wp/nonce",
                                    "POST /wp/dev/key-attestation", "POST /wp/wallet-attestations"])
        stub.requests.removeAll()

        var totals = BenchRun.Totals(), step = BenchRun.Step.offer
        for iteration in 0..<2 { try worker.run(iteration: iteration, step: &step, totals: &totals) }
        XCTAssertEqual(Array(stub.paths.prefix(6)), ["POST /admin/offers", "POST /token", "POST /nonce", "GET /wp/nonce",
                                                      "POST /wp/key-attestations", "POST /credential"])
        XCTAssertEqual(stub.requests.count, 12, "no new registration or wallet attestation per flow")
        XCTAssertEqual(totals.credentials, 4)
        for timed in BenchFlow.pid.steps { XCTAssertEqual(totals.latencies[timed.index].count, 2, "\(timed)") }

        // Token: the attestation and a PoP for this AS, DPoP, client_id = the attestation's sub.
        let token = stub.requests[1]
        XCTAssertEqual(token.header("OAuth-Client-Attestation"), stub.walletAttestation)
        let pop = try JWS.parse(try XCTUnwrap(token.header("OAuth-Client-Attestation-PoP")))
        XCTAssertEqual(pop.type, "oauth-client-attestation-pop+jwt")
        XCTAssertEqual(try pop.payload()["aud"]?.stringValue, Self.issuer)
        XCTAssertNotNil(token.header("DPoP"))
        XCTAssertTrue(String(decoding: token.body!, as: UTF8.self).contains("client_id=client-9"))

        // Key attestation: the proof keys, bound to the issuer's c_nonce; the proofs carry it.
        let kar = try JWS.parse(try XCTUnwrap(try JSONValue.parse(stub.requests[4].body!)["assertion"]?.stringValue))
        XCTAssertEqual(try kar.payload()["c_nonce"]?.stringValue, "c-nonce-1")
        let attested = try XCTUnwrap(try kar.payload()["keys"]?.arrayValue)
        XCTAssertEqual(attested.count, 2)
        let credential = try JSONValue.parse(stub.requests[5].body!)
        let proofs = try XCTUnwrap(credential["proofs"]?["jwt"]?.arrayValue?.compactMap(\.stringValue))
        XCTAssertEqual(proofs.count, 2)
        for (index, proof) in proofs.enumerated() {
            let jws = try JWS.parse(proof)
            XCTAssertEqual(jws.header["key_attestation"]?.stringValue, "key-attestation-1")
            XCTAssertEqual(jws.keyID, String(index))
            XCTAssertEqual(try jws.payload()["nonce"]?.stringValue, "c-nonce-1")
        }
        XCTAssertNotNil(stub.requests[5].header("DPoP"))
        // Fresh proof keys every flow: the second flow's attested keys are others.
        let second = try JWS.parse(try XCTUnwrap(try JSONValue.parse(stub.requests[10].body!)["assertion"]?.stringValue))
        XCTAssertNotEqual(try second.payload()["keys"], try kar.payload()["keys"])
    }

    static func context() throws -> IssuerContext {
        let issuer = try IssuerMetadata(json: [
            "credential_issuer": .string(Self.issuer), "credential_endpoint": .string(Self.issuer + "/credential"),
            "nonce_endpoint": .string(Self.issuer + "/nonce"),
            "credential_configurations_supported": ["pid": ["format": "dc+sd-jwt", "vct": "urn:eudi:pid:1"]],
        ], source: "test")
        let server = try AuthorizationServerMetadata(json: [
            "issuer": .string(Self.issuer), "token_endpoint": .string(Self.issuer + "/token"),
            "dpop_signing_alg_values_supported": ["ES256"],
        ], source: "test")
        return IssuerContext(issuer: issuer, authorizationServer: server)
    }

    static func configuration() throws -> IssuerMetadata.Configuration {
        try XCTUnwrap(try context().issuer.configurations["pid"])
    }
}

/// An issuer and a Wallet Provider answering from memory.
private final class HAIPStub: WalletTransport {
    struct Request {
        let method: String
        let url: String
        let headers: [String]
        let body: [UInt8]?
        func header(_ name: String) -> String? {
            headers.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
    }

    var requests: [Request] = []
    private var keyAttestations = 0
    let walletAttestation = "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(JSONValue.object(["sub": "client-9"]).bytes) + ".c2ln"

    var paths: [String] {
        requests.map { "\($0.method) " + String($0.url.dropFirst(($0.url.hasPrefix("http://wp.test") ? "http://wp.test" : AttestedFlowTests.issuer).count)) }
    }

    func send(_ method: String, _ url: String, headers: [String], body: [UInt8]?) throws -> WalletHTTP.Reply? {
        requests.append(Request(method: method, url: url, headers: headers, body: body))
        let issuer = AttestedFlowTests.issuer, provider = AttestedFlowTests.provider
        switch url {
        case issuer + "/admin/offers":
            return Self.reply(201, ["credential_offer": [
                "credential_issuer": .string(issuer), "credential_configuration_ids": ["pid"],
                "grants": [CredentialOffer.preAuthorizedGrant: ["pre-authorized_code": "code-1"]],
            ]])
        case issuer + "/token": return Self.reply(200, ["access_token": "at-1", "token_type": "DPoP"])
        case issuer + "/nonce": return Self.reply(200, ["c_nonce": "c-nonce-1"])
        case issuer + "/credential":
            return Self.reply(200, ["credentials": [["credential": "sd-jwt-1~"], ["credential": "sd-jwt-2~"]]])
        case provider + "/nonce": return Self.reply(200, ["nonce": "wp-nonce"])
        case provider + "/dev/key-attestation": return Self.reply(200, ["key_attestation": "dev.ka.jwt"])
        case provider + "/wallet-instance": return Self.reply(204)
        case provider + "/wallet-attestations":
            return Self.reply(200, ["wallet_attestations": [["format": "jwt", "wallet_attestation": .string(walletAttestation)]]])
        case provider + "/key-attestations":
            keyAttestations += 1
            return Self.reply(200, ["key_attestation": .string("key-attestation-\(keyAttestations)")])
        default: return Self.reply(404, ["error": "not_found"])
        }
    }

    static func reply(_ status: Int, _ json: JSONValue? = nil) -> WalletHTTP.Reply {
        var fields = HeaderFields()
        if json != nil { fields.add("content-type", "application/json") }
        return WalletHTTP.Reply(status: status, body: json?.bytes ?? [], headers: fields)
    }
}
