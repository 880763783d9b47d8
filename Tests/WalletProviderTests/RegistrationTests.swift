import Cryptography
import Foundation
import JOSE
import JSON
import Store
import Support
@testable import WalletProvider
import XCTest

final class RegistrationTests: XCTestCase {
    private func refusal(_ body: () throws -> Void) -> WalletProviderError? {
        do { try body(); return nil } catch let error as WalletProviderError { return error } catch {
            XCTFail("unexpected \(error)"); return nil
        }
    }

    func testRegistersAnInstalledInstanceWithItsAccount() throws {
        let f = try WalletProviderFixture.make()
        let device = try TestDevice()
        let record = try f.provider.register(device.registration(f.provider, nonce: f.provider.issueNonce()))
        XCTAssertEqual(record.id, device.tag)
        XCTAssertEqual(record.state, "installed")
        XCTAssertEqual(record.format, "dev")
        XCTAssertEqual(record.hardwareJWKThumbprint, device.jwk.thumbprint())
        let stored = try XCTUnwrap(WalletInstanceRepository(database: f.provider.database).find(provider: f.provider.entityID, id: device.tag))
        XCTAssertEqual(stored, record)
        let facts = try JSONValue.parse(Array(stored.deviceFacts.utf8))
        XCTAssertEqual(facts.objectValue?["integrity"], .bool(true))
        XCTAssertEqual(facts.objectValue?["security_level"], .string("software"))
        XCTAssertFalse(stored.account.isEmpty)
    }

    func testNonceRefusals() throws {
        let f = try WalletProviderFixture.make()
        let device = try TestDevice()
        // Unknown: not made by this provider.
        let other = try WalletProviderFixture.make()
        XCTAssertEqual(refusal { try f.provider.register(device.registration(f.provider, nonce: other.provider.issueNonce())) }?.codeValue,
                       .invalidRequest)
        XCTAssertEqual(refusal { try f.provider.register(device.registration(f.provider, nonce: "made-up")) }?.codeValue, .invalidRequest)
        // Expired.
        let old = f.provider.issueNonce()
        let request = try device.registration(f.provider, nonce: old)
        f.clock.advance(301)
        XCTAssertEqual(refusal { try f.provider.register(request) }?.description.contains("expired"), true)
        // Used: the first registration spends it; a second with another device is refused.
        let nonce = f.provider.issueNonce()
        try f.provider.register(device.registration(f.provider, nonce: nonce))
        let second = try TestDevice()
        let used = refusal { try f.provider.register(second.registration(f.provider, nonce: nonce)) }
        XCTAssertEqual(used?.codeValue, .invalidRequest)
        XCTAssertEqual(used?.description.contains("already used"), true)
    }

    func testAttestationRefusalsBurnNothing() throws {
        let f = try WalletProviderFixture.make()
        let device = try TestDevice()
        let nonce = f.provider.issueNonce()
        // Bound to another nonce.
        let elsewhere = try device.registration(f.provider, nonce: f.provider.issueNonce())
        let unbound = RegistrationRequest(nonce: nonce, keyAttestation: elsewhere.keyAttestation, format: .dev, hardwareKeyTag: device.tag)
        XCTAssertEqual(refusal { try f.provider.register(unbound) }?.codeValue, .invalidRequest)
        // Bound to another tag.
        let otherTag = try RegistrationRequest(nonce: nonce, keyAttestation: device.registration(f.provider, nonce: nonce).keyAttestation,
                                               format: .dev, hardwareKeyTag: "another-tag")
        XCTAssertEqual(refusal { try f.provider.register(otherTag) }?.codeValue, .invalidRequest)
        // Signed by another provider's device maker (off the roots).
        let foreign = try WalletProviderFixture.make()
        let offRoots = try RegistrationRequest(nonce: nonce, keyAttestation: device.registration(foreign.provider, nonce: nonce).keyAttestation,
                                               format: .dev, hardwareKeyTag: device.tag)
        XCTAssertEqual(refusal { try f.provider.register(offRoots) }?.description.contains("device-maker root"), true)
        // Unreadable.
        let garbage = RegistrationRequest(nonce: nonce, keyAttestation: "a.b.c", format: .dev, hardwareKeyTag: device.tag)
        XCTAssertEqual(refusal { try f.provider.register(garbage) }?.codeValue, .invalidRequest)
        // A format with no verifier here.
        let android = RegistrationRequest(nonce: nonce, keyAttestation: ["MIIB"], format: .android, hardwareKeyTag: device.tag)
        XCTAssertEqual(refusal { try f.provider.register(android) }?.codeValue, .invalidRequest)
        // Integrity failure: 403 integrity_check_error.
        XCTAssertEqual(refusal { try f.provider.register(device.registration(f.provider, nonce: nonce, integrity: false)) }?.codeValue,
                       .integrityCheckError)
        // The nonce survived every refusal.
        XCTAssertNoThrow(try f.provider.register(device.registration(f.provider, nonce: nonce)))
    }

    func testTamperedAttestationIsRefused() throws {
        let f = try WalletProviderFixture.make()
        let device = try TestDevice()
        let nonce = f.provider.issueNonce()
        let good = try device.registration(f.provider, nonce: nonce)
        let parts = good.keyAttestation.stringValue!.split(separator: ".").map(String.init)
        var claims = try JSONValue.parse(Base64URL.decode(parts[1])!).objectValue!
        claims["device"] = ["model": "x", "os": "y", "integrity": "pass"]
        let forged = parts[0] + "." + Base64URL.encode(JSONValue.object(claims).bytes) + "." + parts[2]
        let request = RegistrationRequest(nonce: nonce, keyAttestation: .string(forged), format: .dev, hardwareKeyTag: device.tag)
        XCTAssertEqual(refusal { try f.provider.register(request) }?.codeValue, .invalidRequest)
    }

    func testTagAlreadyRegistered() throws {
        let f = try WalletProviderFixture.make()
        let device = try TestDevice()
        try f.provider.register(device.registration(f.provider, nonce: f.provider.issueNonce()))
        let nonce = f.provider.issueNonce()
        let again = refusal { try f.provider.register(device.registration(f.provider, nonce: nonce)) }
        XCTAssertEqual(again?.codeValue, .invalidRequest)
        XCTAssertEqual(again?.description.contains("already registered"), true)
        // ...and that refusal burnt nothing either.
        XCTAssertNoThrow(try f.provider.register(TestDevice().registration(f.provider, nonce: nonce)))
    }

    func testDevelopmentAttestationsOff() throws {
        var configuration = WalletProviderConfiguration()
        configuration.devAttestations = false
        let f = try WalletProviderFixture.make(configuration: configuration)
        let device = try TestDevice()
        XCTAssertEqual(refusal { _ = try device.registration(f.provider, nonce: f.provider.issueNonce()) }?.codeValue, .notFound)
    }

    func testDevKeyAttestationRequestRefusals() throws {
        let f = try WalletProviderFixture.make()
        let privateJWK: JSONValue = ["kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA", "d": "AAAA"]
        for body: JSONValue in [["hardware_key_tag": "t", "nonce": "n"], ["jwk": privateJWK, "hardware_key_tag": "t", "nonce": "n"],
                                ["jwk": ["kty": "oct", "k": "AAAA"], "hardware_key_tag": "t", "nonce": "n"],
                                ["jwk": try TestDevice().jwk.jsonValue, "nonce": "n"],
                                ["jwk": try TestDevice().jwk.jsonValue, "hardware_key_tag": "t", "nonce": "n", "integrity": "maybe"]] {
            XCTAssertEqual(refusal { _ = try f.provider.makeDevelopmentKeyAttestation(DevKeyAttestationRequest.parse(body)) }?.codeValue,
                           .badRequest, "\(body)")
        }
    }

    /// 50 registrations racing with one nonce (each its own device): exactly one is stored.
    func testConcurrentUsesOfOneNonce() throws {
        let path = NSTemporaryDirectory() + "wp-race-\(UUID().uuidString).sqlite"
        let f = try WalletProviderFixture.make(databasePath: path)
        let nonce = f.provider.issueNonce()
        let requests = try (0..<50).map { _ in try TestDevice().registration(f.provider, nonce: nonce) }
        let wins = Locked(0)
        let refusals = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: requests.count) { i in
            do {
                try f.provider.register(requests[i])
                wins.withLock { $0 += 1 }
            } catch {
                refusals.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(wins.withLock { $0 }, 1)
        XCTAssertEqual(refusals.withLock { $0.count }, 49)
        XCTAssertEqual(try WalletInstanceRepository(database: f.provider.database).list(provider: f.provider.entityID).count, 1)
    }
}
