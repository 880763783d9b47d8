import Cryptography
import Foundation
import MDoc
import JOSE
import JSON
import Store
import Support
@testable import WalletProvider
import XCTest

final class WalletAttestationTests: XCTestCase {
    /// A registered device and a way to make attestation requests for it.
    struct Registered {
        let fixture: WalletProviderFixture
        let device: TestDevice
        var provider: WalletProvider { fixture.provider }

        init(_ fixture: WalletProviderFixture, integrity: Bool = true) throws {
            self.fixture = fixture
            device = try TestDevice()
            try fixture.provider.register(device.registration(fixture.provider, nonce: fixture.provider.issueNonce(), integrity: integrity))
        }

        func request(walletKey: PrivateKey? = nil, nonce: String? = nil, type: String = WalletAttestationRequest.tokenType,
                     integrity: Bool = true, derSignature: Bool = false, changes: [String: JSONValue] = [:],
                     signWith: PrivateKey? = nil) throws -> (String, PrivateKey) {
            let key = try walletKey ?? PrivateKey(generatingFor: .ES256)
            let jwk = JWK(publicKey: key.publicKey)
            let thumbprint = jwk.thumbprint()
            let nonce = nonce ?? provider.issueNonce()
            let now = fixture.clock.now()
            var signature = try device.key.sign(HardwareSignature.clientData(nonceMember: "challenge", nonce: nonce, jwkThumbprint: thumbprint),
                                                algorithm: .ES256)
            if derSignature { signature = try XCTUnwrap(Self.der(fromRaw: signature)) }
            let keyAttestation = try provider.makeDevelopmentKeyAttestation(DevKeyAttestationRequest.parse(
                ["jwk": device.jwk.jsonValue, "hardware_key_tag": .string(device.tag), "nonce": .string(nonce),
                 "integrity": integrity ? "pass" : "fail"]))
            var claims: [String: JSONValue] = [
                "iss": .string(provider.urls.instance(thumbprint)), "aud": .string(provider.entityID), "iat": .int(now),
                "exp": .int(now + 300), "challenge": .string(nonce), "hardware_key_tag": .string(device.tag),
                "hardware_signature": .string(Base64URL.encode(signature)), "cnf": ["jwk": jwk.jsonValue],
                "key_attestation": .string(keyAttestation),
            ]
            for (name, value) in changes { claims[name] = value == .null ? nil : value }
            let jwt = try JWS.sign(payload: claims, key: signWith ?? key, algorithm: .ES256, keyID: thumbprint, type: type)
            return (jwt, key)
        }

        /// r‖s as a DER ECDSA-Sig-Value, as Android keystores sign.
        static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
            func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
                var b = Array(bytes.drop { $0 == 0 })
                if b.isEmpty { b = [0] }
                if b[0] & 0x80 != 0 { b.insert(0, at: 0) }
                return [0x02, UInt8(b.count)] + b
            }
            let body = integer(raw[0..<32]) + integer(raw[32..<64])
            return [0x30, UInt8(body.count)] + body
        }
    }

    private func issue(_ provider: WalletProvider, _ jwt: String, type: String = WalletAttestationRequest.tokenType) throws -> String {
        try provider.issueWalletAttestation(WalletAttestationRequest.parse(jwt, expectedType: type))
    }

    private func code(_ body: () throws -> Any) -> String? {
        do { _ = try body(); return nil } catch let error as WalletProviderError { return error.codeValue.rawValue } catch {
            return "\(error)"
        }
    }

    func testIssuesAndMakesTheInstanceOperational() throws {
        let r = try Registered(WalletProviderFixture.make())
        for der in [false, true] {
            let (jwt, key) = try r.request(derSignature: der)
            let attestation = try issue(r.provider, jwt)
            let (jws, claims) = try JWS.parseClaims(attestation)
            XCTAssertEqual(jws.type, "oauth-client-attestation+jwt")
            XCTAssertEqual(jws.keyID, r.provider.keys.signingJWK.kid)
            XCTAssertEqual(jws.header["x5c"]?.stringArray, r.provider.keys.x5c)
            try jws.verify(keys: JWKSet(keys: [r.provider.keys.signingJWK]), allowList: [.ES256], expectedType: "oauth-client-attestation+jwt")
            XCTAssertEqual(claims["iss"]?.stringValue, r.provider.entityID)
            XCTAssertEqual(claims["sub"]?.stringValue, JWK(publicKey: key.publicKey).thumbprint())
            XCTAssertEqual(claims["exp"]?.intValue, r.fixture.clock.now() + 3_600)
            XCTAssertEqual(claims["wallet_name"]?.stringValue, "Trustbed Test Wallet")
            XCTAssertEqual(claims["aal"]?.stringValue, r.provider.configuration.aal)
        }
        XCTAssertEqual(try r.provider.instances().first?.state, "operational")
    }

    func testSecondWireFormat() throws {
        let r = try Registered(WalletProviderFixture.make())
        let request = try WalletAttestationRequest.parse(r.request(type: "wp-war+jwt").0, expectedType: "wp-war+jwt")
        let attestations = try r.provider.issueWalletAttestations(request, formats: [.jwt, .sdJWT])
        XCTAssertEqual(attestations.map(\.format), [.jwt, .sdJWT])
        let sdJWT = attestations[1].value
        XCTAssertTrue(sdJWT.hasSuffix("~"))
        let (jws, claims) = try JWS.parseClaims(String(sdJWT.split(separator: "~")[0]))
        XCTAssertEqual(jws.type, "dc+sd-jwt")
        XCTAssertEqual(claims["vct"]?.stringValue, "https://wp.example.org/wallet-attestation")
        XCTAssertNil(claims["wallet_name"], "wallet_name is selectively disclosable")
        XCTAssertEqual(claims["cnf"], try JWS.parseClaims(attestations[0].value).claims["cnf"])
        XCTAssertEqual(sdJWT.split(separator: "~").count, 2, "one disclosure: wallet_name")
    }

    func testIntegrityAssertionIsStoredUnchecked() throws {
        let r = try Registered(WalletProviderFixture.make())
        let token = "eyJhbGciOiJBMjU2S1ciLCJlbmMiOiJBMjU2R0NNIn0.not-a-real-play-integrity-token"
        let (jwt, _) = try r.request(changes: ["integrity_assertion": .string(token)])
        _ = try issue(r.provider, jwt)
        let stored = try XCTUnwrap(r.provider.instances().first)
        XCTAssertEqual(stored.integrityAssertion, token)
        XCTAssertEqual(stored.integrityAssertionAt, r.fixture.clock.now())
        let json = try JSONValue.parse(WalletInstanceJSON.one(stored))
        XCTAssertEqual(json["integrity_assertion"]?.stringValue, token)
        // A later request without one keeps it; an oversized one is 400 and stores nothing.
        _ = try issue(r.provider, r.request().0)
        XCTAssertEqual(try r.provider.instances().first?.integrityAssertion, token)
        let huge = String(repeating: "A", count: WalletAttestationRequest.maximumIntegrityAssertion + 1)
        XCTAssertEqual(code { try self.issue(r.provider, r.request(changes: ["integrity_assertion": .string(huge)]).0) }, "bad_request")
        XCTAssertEqual(try r.provider.instances().first?.integrityAssertion, token)
    }

    func testMDocWalletAttestation() throws {
        let r = try Registered(WalletProviderFixture.make())
        let request = try WalletAttestationRequest.parse(r.request(type: "wp-war+jwt").0, expectedType: "wp-war+jwt")
        let attestations = try r.provider.issueWalletAttestations(request, formats: [.jwt, .mdoc])
        XCTAssertEqual(attestations.map(\.format.rawValue), ["jwt", "mso_mdoc"])
        let claims = try JWS.parseClaims(attestations[0].value).claims
        let issued = try IssuerSigned(base64URL: attestations[1].value)
        let verified = try issued.verify(at: r.fixture.clock.now(), trustAnchors: nil,
                                         expectedDocType: "org.iso.18013.5.1.it.WalletAttestation")
        XCTAssertEqual(verified.documentSignerChain.map(\.der), [r.provider.keys.signer.der])
        XCTAssertEqual(try verified.deviceKey.publicKey(), try request.key.publicKey(), "deviceKey = cnf.jwk")
        let elements = try XCTUnwrap(verified.elements["org.iso.18013.5.1.it"])
        for name in ["iss", "sub", "aal", "wallet_name"] {
            XCTAssertEqual(elements[name]?.textValue, claims[name]?.stringValue, name)
        }
        XCTAssertEqual(verified.validityInfo.signed, claims["iat"]?.intValue)
        XCTAssertEqual(verified.validityInfo.validUntil, claims["exp"]?.intValue)
    }

    func testFixedClientID() throws {
        var configuration = WalletProviderConfiguration()
        configuration.clientID = .fixed("wallet-solution")
        let r = try Registered(WalletProviderFixture.make(configuration: configuration))
        let attestation = try issue(r.provider, r.request().0)
        XCTAssertEqual(try JWS.parseClaims(attestation).claims["sub"]?.stringValue, "wallet-solution")
    }

    func testRefusalsInOrder() throws {
        let r = try Registered(WalletProviderFixture.make())
        let failing = try Registered(r.fixture)
        // 400: malformed, missing claims, the other endpoint's typ.
        XCTAssertEqual(code { try self.issue(r.provider, "a.b.c") }, "bad_request")
        XCTAssertEqual(code { try self.issue(r.provider, r.request(type: "wp-war+jwt").0) }, "bad_request")
        for claim in ["iss", "aud", "iat", "exp", "challenge", "hardware_key_tag", "hardware_signature", "cnf", "key_attestation"] {
            XCTAssertEqual(code { try self.issue(r.provider, r.request(changes: [claim: .null]).0) }, "bad_request", claim)
        }
        // 403: signature, times, nonce.
        XCTAssertEqual(code { try self.issue(r.provider, r.request(signWith: PrivateKey(generatingFor: .ES256)).0) }, "invalid_request")
        XCTAssertEqual(code { try self.issue(r.provider, r.request(changes: ["exp": .int(r.fixture.clock.now() - 1)]).0) }, "invalid_request")
        XCTAssertEqual(code { try self.issue(r.provider, r.request(nonce: "made-up").0) }, "invalid_request")
        // 404: unknown tag.
        XCTAssertEqual(code { try self.issue(r.provider, r.request(changes: ["hardware_key_tag": "unknown"]).0) }, "not_found")
        // 403: hardware signature, iss, aud.
        XCTAssertEqual(code { try self.issue(r.provider, r.request(changes: ["hardware_signature": .string(Base64URL.encode([UInt8](repeating: 1, count: 64)))]).0) },
                       "invalid_request")
        XCTAssertEqual(code { try self.issue(r.provider, r.request(changes: ["iss": "https://elsewhere.example"]).0) }, "invalid_request")
        XCTAssertEqual(code { try self.issue(r.provider, r.request(changes: ["aud": "https://elsewhere.example"]).0) }, "invalid_request")
        // 403 integrity_check_error.
        XCTAssertEqual(code { try self.issue(failing.provider, failing.request(integrity: false).0) }, "integrity_check_error")
        // A nonce used once is refused the second time; refusals burnt nothing before.
        let nonce = r.provider.issueNonce()
        XCTAssertEqual(code { try self.issue(r.provider, r.request(nonce: nonce, changes: ["aud": "x"]).0) }, "invalid_request")
        XCTAssertNil(code { try self.issue(r.provider, r.request(nonce: nonce).0) })
        XCTAssertEqual(code { try self.issue(r.provider, r.request(nonce: nonce).0) }, "invalid_request")
    }

    func testRevokedInstanceIsRefused() throws {
        let r = try Registered(WalletProviderFixture.make())
        try r.provider.database.execute("UPDATE wallet_provider_instances SET revoked_at = 1 WHERE id = ?", [.text(r.device.tag)])
        XCTAssertEqual(code { try self.issue(r.provider, r.request().0) }, "invalid_request")
    }

    func testHardwareSignatureEncodings() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let data = Array("{\"nonce\":\"n\",\"jwk_thumbprint\":\"t\"}".utf8)
        let raw = try key.sign(data, algorithm: .ES256)
        XCTAssertTrue(HardwareSignature.verify(Base64URL.encode(raw), data: data, key: key.publicKey))
        let der = try XCTUnwrap(Registered.der(fromRaw: raw))
        XCTAssertEqual(HardwareSignature.rawFromDER(der), raw)
        XCTAssertTrue(HardwareSignature.verify(Base64URL.encode(der), data: data, key: key.publicKey))
        XCTAssertFalse(HardwareSignature.verify(Base64URL.encode(raw), data: data + [0], key: key.publicKey))
        XCTAssertFalse(HardwareSignature.verify("!!", data: data, key: key.publicKey))
        XCTAssertNil(HardwareSignature.rawFromDER([0x30, 0x03, 0x02, 0x01]))
        XCTAssertEqual(String(decoding: HardwareSignature.clientData(nonceMember: "challenge", nonce: "n", jwkThumbprint: "t"), as: UTF8.self),
                       #"{"challenge":"n","jwk_thumbprint":"t"}"#)
    }
}

final class LifecycleTests: XCTestCase {
    func testRevokeUninstallPurge() throws {
        let r = try WalletAttestationTests.Registered(WalletProviderFixture.make())
        let provider = r.provider
        _ = try provider.issueWalletAttestation(WalletAttestationRequest.parse(r.request().0, expectedType: "war+jwt"))
        XCTAssertEqual(try provider.instances().first?.state, "operational")
        let revoked = try provider.changeStatus(instance: r.device.tag, InstanceStatusChange.parse(["status": "revoked", "reason": "lost"]))
        XCTAssertEqual(revoked.state, "installed")
        XCTAssertEqual(revoked.reason, "lost")
        XCTAssertNotNil(revoked.revokedAt)
        XCTAssertThrowsError(try provider.issueWalletAttestation(WalletAttestationRequest.parse(r.request().0, expectedType: "war+jwt")))
        XCTAssertEqual(try provider.changeStatus(instance: r.device.tag, .init(status: .uninstalled, reason: nil)).state, "uninstalled")
        XCTAssertThrowsError(try provider.changeStatus(instance: r.device.tag, .init(status: .revoked, reason: nil))) { error in
            XCTAssertEqual((error as? WalletProviderError)?.codeValue, .invalidRequest)
        }
        XCTAssertThrowsError(try provider.changeStatus(instance: "unknown", .init(status: .revoked, reason: nil))) { error in
            XCTAssertEqual((error as? WalletProviderError)?.codeValue, .notFound)
        }
        XCTAssertThrowsError(try InstanceStatusChange.parse(["status": "paused"]))
        try provider.purgeAccount(revoked.account)
        XCTAssertEqual(try provider.instances(), [])
        XCTAssertThrowsError(try provider.purgeAccount(revoked.account)) { error in
            XCTAssertEqual((error as? WalletProviderError)?.codeValue, .notFound)
        }
    }
}

final class KeyAttestationIssuanceTests: XCTestCase {
    func testIssuesForTheInstancesKeysWithItsStorageLevel() throws {
        let r = try WalletAttestationTests.Registered(WalletProviderFixture.make())
        let provider = r.provider
        let walletKeys = try (0..<2).map { _ in try PrivateKey(generatingFor: .ES256) }
        func request(nonce: String? = nil, iss: String? = nil, signer: PrivateKey? = nil, cNonce: String? = "c") throws -> String {
            var claims: [String: JSONValue] = [
                "iss": .string(iss ?? provider.urls.instance(r.device.tag)), "aud": .string(provider.entityID),
                "iat": .int(r.fixture.clock.now()), "nonce": .string(nonce ?? provider.issueNonce()),
                "keys": .array(walletKeys.map { JWK(publicKey: $0.publicKey).jsonValue }),
            ]
            if let cNonce { claims["c_nonce"] = .string(cNonce) }
            return try JWS.sign(payload: claims, key: signer ?? r.device.key, algorithm: .ES256, keyID: r.device.tag, type: "wp-kar+jwt")
        }
        let attestation = try provider.issueKeyAttestation(KeyAttestationRequest.parse(request()))
        let (jws, claims) = try JWS.parseClaims(attestation)
        XCTAssertEqual(jws.type, "key-attestation+jwt")
        XCTAssertEqual(claims["attested_keys"]?.arrayValue?.count, 2)
        XCTAssertEqual(claims["key_storage"], ["iso_18045_basic"])
        XCTAssertEqual(claims["nonce"], "c")
        XCTAssertThrowsError(try provider.issueKeyAttestation(KeyAttestationRequest.parse(request(iss: "x"))))
        XCTAssertThrowsError(try provider.issueKeyAttestation(KeyAttestationRequest.parse(request(signer: PrivateKey(generatingFor: .ES256)))))
        let nonce = provider.issueNonce()
        XCTAssertNoThrow(try provider.issueKeyAttestation(KeyAttestationRequest.parse(request(nonce: nonce))))
        XCTAssertThrowsError(try provider.issueKeyAttestation(KeyAttestationRequest.parse(request(nonce: nonce))))
        XCTAssertEqual(WalletProvider.resistance(securityLevel: "tee"), "iso_18045_moderate")
        XCTAssertEqual(WalletProvider.resistance(securityLevel: "strongbox"), "iso_18045_high")
        XCTAssertEqual(WalletProvider.resistance(securityLevel: "secure_enclave"), "iso_18045_high")
        XCTAssertEqual(WalletProvider.resistance(securityLevel: "software"), "iso_18045_basic")
    }
}

final class TrustChainHeaderTests: XCTestCase {
    /// The chain is built once and reused until 60 s before its earliest statement expires.
    func testReusedUntilItsEarliestExpiry() throws {
        let directory = NSTemporaryDirectory() + "wp-chain-\(UUID().uuidString)"
        let clock = ManualClock(1_800_000_000)
        let keys = try WalletProviderKeys.loadOrCreate(directory: directory, provider: "https://wp.example.org", now: clock.now())
        let statementKey = try PrivateKey(generatingFor: .ES256)
        let built = Locked(0)
        let chain = try [1_800_000_600, 1_800_000_300].map { exp in
            try JWS.sign(payload: ["exp": .int(Int64(exp))], key: statementKey, algorithm: .ES256, keyID: "k", type: "entity-statement+jwt")
        }
        let provider = WalletProvider(
            entityID: "https://wp.example.org", entityName: "wp", configuration: WalletProviderConfiguration(), keys: keys,
            database: try Database(path: ":memory:"), clock: clock, trustAnchors: [], adminToken: "t",
            trustChain: { built.withLock { $0 += 1 }; return chain })
        XCTAssertEqual(provider.currentTrustChain(now: clock.now()), chain)
        XCTAssertEqual(provider.currentTrustChain(now: clock.now() + 200), chain)
        XCTAssertEqual(built.withLock { $0 }, 1)
        _ = provider.currentTrustChain(now: clock.now() + 250)
        XCTAssertEqual(built.withLock { $0 }, 2, "within 60 s of the earliest exp (300) it is built again")
        let attestation = try provider.signWalletAttestation(key: JWK(publicKey: statementKey.publicKey), thumbprint: "t", now: clock.now())
        XCTAssertEqual(try JWS.parseClaims(attestation).jws.header["trust_chain"]?.stringArray, chain)
    }
}
