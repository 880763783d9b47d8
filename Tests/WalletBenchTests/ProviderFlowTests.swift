import Foundation
import HTTPClient
import JOSE
import JSON
import Support
import Wallet
@testable import WalletBench
import XCTest

/// The Wallet Provider flows of `trustbed wallet bench` (issue 20, Benchmark), run against a
/// stub provider: which requests each iteration sends, what it times, what it acknowledges.
final class ProviderFlowTests: XCTestCase {
    private let provider = "http://127.0.0.1:1/wallet-provider"

    func testFlowParsingAndSteps() throws {
        for flow in BenchFlow.allCases { XCTAssertEqual(try BenchFlow(parsing: flow.rawValue), flow) }
        XCTAssertEqual(try BenchFlow(parsing: "attest-legacy"), .attestLegacy)
        for bad in ["", "Register", "attest_legacy", "pid "] {
            XCTAssertThrowsError(try BenchFlow(parsing: bad), bad) { XCTAssertTrue("\($0)".contains("plain, register, attest, attest-legacy, pid")) }
        }
        XCTAssertEqual(BenchFlow.plain.steps, [.offer, .token, .nonce, .credential])
        XCTAssertEqual(BenchFlow.register.steps, [.nonce, .deviceAttestation, .registration])
        XCTAssertEqual(BenchFlow.attestLegacy.steps, [.nonce, .deviceAttestation, .walletAttestation])
        XCTAssertEqual(BenchFlow.pid.steps, [.offer, .token, .nonce, .keyAttestation, .credential])
        XCTAssertEqual(BenchFlow.sign.steps, [.challenge, .instruction])
        XCTAssertEqual(BenchFlow.pinRecovery.steps, [.offer, .token, .nonce, .startPINRecovery, .credential, .disclosure])
        XCTAssertEqual(BenchFlow.allCases.filter(\.needsIssuer), [.plain, .pid, .pinRecovery])
        XCTAssertEqual(BenchFlow.allCases.filter(\.needsProvider), [.register, .attest, .attestLegacy, .pid, .sign, .pinRecovery])
        // Each step has its own slot in the latency table.
        XCTAssertEqual(Set(BenchRun.Step.allCases.map(\.index)), Set(0..<BenchRun.Step.allCases.count))
    }

    func testOptionsNameWhatAFlowLacks() throws {
        func problem(_ flow: BenchFlow, issuer: String = "", token: String = "", provider: String? = nil, batch: Int = 1) -> String? {
            var options = BenchOptions(issuer: issuer, adminToken: token)
            options.flow = flow
            options.provider = provider
            options.batch = batch
            do { try options.validate() } catch { return "\(error)" }
            return nil
        }
        XCTAssertNil(problem(.register, provider: provider))
        XCTAssertEqual(problem(.register), "--flow register needs --provider")
        XCTAssertEqual(problem(.attest, provider: ""), "--flow attest needs --provider")
        XCTAssertEqual(problem(.register, provider: provider, batch: 2), "--batch applies to the plain and pid flows")
        XCTAssertEqual(problem(.pid, token: "t", provider: provider), "--flow pid needs --issuer")
        XCTAssertEqual(problem(.pid, issuer: "http://i", provider: provider), "pass --admin-token or set TRUSTBED_ADMIN_TOKEN")
        XCTAssertEqual(problem(.pid, issuer: "http://i", token: "t"), "--flow pid needs --provider")
        XCTAssertNil(problem(.pid, issuer: "http://i", token: "t", provider: provider, batch: 3))
        XCTAssertNil(problem(.plain, issuer: "http://i", token: "t"))
    }

    func testTagsAreUniquePerRunAndIterationAndAcceptable() {
        let a = BenchTags(), b = BenchTags()
        XCTAssertNotEqual(a.prefix, b.prefix)
        let tags = (0..<100).map(a.registration) + (0..<4).flatMap { t in (0..<3).map { a.warmUp(thread: t, index: $0) } }
        XCTAssertEqual(Set(tags).count, tags.count)
        // The provider's rule (1...256 printable ASCII, no `"` or `\`), and no space: the
        // acknowledgement file is one tag a line, read by split().
        for tag in tags {
            XCTAssertTrue(tag.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C } && tag.utf8.count <= 256, tag)
        }
    }

    func testRegisterTimesThreeStepsAndAcknowledgesOnlyA204() throws {
        let stub = ProviderStub()
        let log = try temporaryLog()
        let keys = [try HolderKey(), try HolderKey()]
        let worker = try ProviderWorker(flow: .register, client: client(stub), keys: keys, tags: BenchTags(prefix: "p"), thread: 0,
                                        instances: 4, acknowledged: log.log)
        XCTAssertTrue(stub.requests.isEmpty, "register has no warm-up")
        var totals = BenchRun.Totals(), step = BenchRun.Step.offer
        try worker.run(iteration: 7, step: &step, totals: &totals)
        XCTAssertEqual(stub.requests.map { "\($0.method) \($0.url.dropFirst(provider.count))" },
                       ["GET /nonce", "POST /dev/key-attestation", "POST /wallet-instance"])
        let development = try JSONValue.parse(stub.requests[1].body!)
        XCTAssertEqual(development["nonce"]?.stringValue, "n1")
        XCTAssertEqual(development["hardware_key_tag"]?.stringValue, "p-r7")
        XCTAssertEqual(development["jwk"]?.objectValue, keys[1].jwk, "iteration 7 takes key 7 % 2 of the pool")
        let registration = try JSONValue.parse(stub.requests[2].body!)
        XCTAssertEqual(registration, ["challenge": "n1", "key_attestation": "dev.ka.1", "hardware_key_tag": "p-r7"])
        for timed in [BenchRun.Step.nonce, .deviceAttestation, .registration] { XCTAssertEqual(totals.latencies[timed.index].count, 1) }
        XCTAssertEqual(try log.text(), "p-r7\n")

        // A refused registration is an error of its step, and acknowledges nothing.
        stub.registrationStatus = 403
        XCTAssertThrowsError(try worker.run(iteration: 8, step: &step, totals: &totals)) { error in
            guard let error = error as? WalletError else { return XCTFail("\(error)") }
            XCTAssertEqual(BenchRun.kind(of: error, step: step), "registration: HTTP 403 invalid_request")
        }
        XCTAssertEqual(try log.text(), "p-r7\n")
    }

    func testAttestFlowsRegisterWarmUpInstancesAndSendTheirWireFormat() throws {
        for legacy in [false, true] {
            let stub = ProviderStub()
            let walletKey = try HolderKey()
            let worker = try ProviderWorker(flow: legacy ? .attestLegacy : .attest, client: client(stub), keys: [walletKey],
                                            tags: BenchTags(prefix: "p"), thread: 3, instances: 2, acknowledged: nil)
            XCTAssertEqual(worker.instances.map(\.tag), ["p-w3-0", "p-w3-1"])
            XCTAssertEqual(stub.requests.filter { $0.url.hasSuffix("/wallet-instance") }.count, 2)
            stub.requests.removeAll()
            stub.attestationKey = walletKey
            var totals = BenchRun.Totals(), step = BenchRun.Step.offer
            // The thread's instances in turn, whatever iteration numbers it claims.
            try worker.run(iteration: 4, step: &step, totals: &totals)
            XCTAssertEqual(try JSONValue.parse(stub.requests[1].body!)["hardware_key_tag"]?.stringValue, "p-w3-0")
            stub.requests.removeAll()
            try worker.run(iteration: 6, step: &step, totals: &totals)
            XCTAssertEqual(stub.requests.map { String($0.url.dropFirst(provider.count)) },
                           ["/nonce", "/dev/key-attestation", legacy ? "/token" : "/wallet-attestations"])
            XCTAssertEqual(try JSONValue.parse(stub.requests[1].body!)["hardware_key_tag"]?.stringValue, "p-w3-1")
            let assertion: String
            if legacy {
                let form = Parameters(encoded: String(decoding: stub.requests[2].body!, as: UTF8.self))
                XCTAssertEqual(form.all("grant_type"), ["urn:ietf:params:oauth:grant-type:jwt-bearer"])
                assertion = try XCTUnwrap(form.all("assertion").first)
            } else {
                assertion = try XCTUnwrap(try JSONValue.parse(stub.requests[2].body!)["assertion"]?.stringValue)
            }
            let request = try JWS.parse(assertion)
            XCTAssertEqual(request.type, legacy ? "war+jwt" : "wp-war+jwt")
            let claims = try request.payload()
            XCTAssertEqual(claims["challenge"]?.stringValue, "n4")
            XCTAssertEqual(claims["key_attestation"]?.stringValue, "dev.ka.4")
            XCTAssertEqual(claims["hardware_key_tag"]?.stringValue, "p-w3-1")
            XCTAssertEqual(claims["cnf"]?["jwk"]?.objectValue, walletKey.jwk)
            for timed in [BenchRun.Step.nonce, .deviceAttestation, .walletAttestation] {
                XCTAssertEqual(totals.latencies[timed.index].count, 2)
            }
            // A 200 whose attestation is not for the request's wallet key does not count.
            stub.attestationKey = try HolderKey()
            XCTAssertThrowsError(try worker.run(iteration: 2, step: &step, totals: &totals)) {
                XCTAssertTrue("\($0)".contains("cnf.jwk"), "\($0)")
            }
        }
    }

    /// `--device-format android`: the warm-up instances register with an Android Key Attestation
    /// chain made under the test roots, and an iteration is nonce → wallet attestation, the
    /// request carrying an `integrity_assertion` instead of a development key attestation.
    func testAndroidInstancesNeedNoDeviceAttestationPerIteration() throws {
        let folder = NSTemporaryDirectory() + "bench-roots-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        let roots = try TestDeviceAttestations(besideWallet: folder + "/wallet.json")
        let stub = ProviderStub()
        let walletKey = try HolderKey()
        let worker = try ProviderWorker(flow: .attestLegacy, client: client(stub), keys: [walletKey], tags: BenchTags(prefix: "p"),
                                        thread: 1, instances: 2, acknowledged: nil, deviceFormat: "android", testRoots: roots)
        XCTAssertEqual(worker.instances.map(\.tag), ["p-w1-0", "p-w1-1"])
        XCTAssertEqual(stub.requests.map { String($0.url.dropFirst(provider.count)) }, ["/nonce", "/wallet-instance", "/nonce", "/wallet-instance"],
                       "registered without the provider's development attestation")
        let registration = try JSONValue.parse(stub.requests[1].body!)
        XCTAssertEqual(registration["key_attestation"]?.arrayValue?.count, 2, "the leaf and the test root, base64 DER")
        stub.requests.removeAll()
        stub.attestationKey = walletKey
        var totals = BenchRun.Totals(), step = BenchRun.Step.offer
        try worker.run(iteration: 0, step: &step, totals: &totals)
        XCTAssertEqual(stub.requests.map { String($0.url.dropFirst(provider.count)) }, ["/nonce", "/token"])
        let form = Parameters(encoded: String(decoding: stub.requests[1].body!, as: UTF8.self))
        let claims = try JWS.parse(try XCTUnwrap(form.all("assertion").first)).payload()
        XCTAssertEqual(claims["integrity_assertion"]?.stringValue, WalletProviderClient.testIntegrityAssertion)
        XCTAssertNil(claims["key_attestation"])
        XCTAssertEqual(claims["hardware_key_tag"]?.stringValue, "p-w1-0")
        XCTAssertEqual(totals.latencies[BenchRun.Step.nonce.index].count, 1)
        XCTAssertEqual(totals.latencies[BenchRun.Step.walletAttestation.index].count, 1)
        XCTAssertEqual(totals.latencies[BenchRun.Step.deviceAttestation.index].count, 0)

        var options = BenchOptions(issuer: "", adminToken: "")
        options.flow = .attestLegacy
        options.provider = provider
        options.deviceFormat = "android"
        XCTAssertNoThrow(try options.validate())
        XCTAssertEqual(options.steps, [.nonce, .walletAttestation], "the report has no device attestation row")
        options.deviceFormat = "ios"
        XCTAssertThrowsError(try options.validate()) { XCTAssertEqual("\($0)", "--device-format must be dev, android or apple") }
        options.flow = .register
        options.deviceFormat = "apple"
        XCTAssertThrowsError(try options.validate()) {
            XCTAssertEqual("\($0)", "--device-format applies to the attest and attest-legacy flows")
        }
    }

    func testTheLegacyAnswerIsTheJWTWithoutSurroundingWhitespace() throws {
        let stub = ProviderStub()
        let key = try HolderKey()
        stub.attestationKey = key
        let jwt = try XCTUnwrap(try client(stub).walletAttestations(assertion: "a.b.c", legacy: true)["jwt"])
        XCTAssertTrue(jwt.hasPrefix("eyJ") && jwt.hasSuffix(".c2ln"), jwt)
        XCTAssertNoThrow(try ProviderWorker.check(["jwt": jwt], walletKey: key))
        XCTAssertThrowsError(try ProviderWorker.check(["jwt": "a.b"], walletKey: key))
        XCTAssertThrowsError(try ProviderWorker.check(["jwt": jwt + ".d"], walletKey: key), "four parts are not a JWS")
        XCTAssertThrowsError(try ProviderWorker.check([:], walletKey: key))
    }

    func testAWarmUpRefusalFailsTheWorker() throws {
        let stub = ProviderStub()
        stub.registrationStatus = 403
        XCTAssertThrowsError(try ProviderWorker(flow: .attest, client: client(stub), keys: [try HolderKey()], tags: BenchTags(),
                                                thread: 0, instances: 1, acknowledged: nil))
    }

    func testPercentileIsTheNearestRank() {
        XCTAssertEqual(LoadTest.percentile([], 0.99), 0)
        let samples = (1...200).map(Double.init)
        XCTAssertEqual(LoadTest.percentile(samples, 0.99), 198)
        XCTAssertEqual(LoadTest.percentile(samples, 0.50), 100)
        XCTAssertEqual(LoadTest.percentile([5], 0.99), 5)
    }

    // MARK: - helpers

    private func client(_ stub: ProviderStub) throws -> WalletProviderClient {
        WalletProviderClient(provider: provider, http: try WalletHTTP(transport: stub))
    }

    private func temporaryLog() throws -> (log: AcknowledgementLog, text: () throws -> String) {
        let path = NSTemporaryDirectory() + "bench-ack-\(UUID().uuidString).txt"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return (try AcknowledgementLog(path: path), { try String(contentsOfFile: path, encoding: .utf8) })
    }
}

/// A Wallet Provider answering from memory: numbered nonces and development attestations, a
/// registration status to set, and wallet attestations for `attestationKey`.
private final class ProviderStub: WalletTransport {
    struct Request {
        let method: String
        let url: String
        let body: [UInt8]?
    }

    var requests: [Request] = []
    var registrationStatus = 204
    var attestationKey: HolderKey?
    private var nonces = 0

    func send(_ method: String, _ url: String, headers: [String], body: [UInt8]?) throws -> WalletHTTP.Reply? {
        requests.append(Request(method: method, url: url, body: body))
        switch url.split(separator: "/").last.map(String.init) ?? "" {
        case "nonce":
            nonces += 1
            return Self.reply(200, ["nonce": .string("n\(nonces)")])
        case "key-attestation": return Self.reply(200, ["key_attestation": .string("dev.ka.\(nonces)")])
        case "wallet-instance":
            return registrationStatus == 204 ? Self.reply(204) : Self.reply(registrationStatus, ["error": "invalid_request"])
        case "wallet-attestations":
            return Self.reply(200, ["wallet_attestations": [["format": "jwt", "wallet_attestation": .string(attestation())]]])
        case "token":
            var fields = HeaderFields()
            fields.add("content-type", "application/jwt")
            // Surrounding whitespace, which the client must trim (a JWT has none).
            return WalletHTTP.Reply(status: 200, body: Array((" \r\n" + attestation() + "\r\n").utf8), headers: fields)
        default: return Self.reply(404, ["error": "not_found"])
        }
    }

    /// An attestation-shaped JWT (unsigned: the bench reads its cnf, it does not verify it).
    private func attestation() -> String {
        let claims: JSONValue = ["cnf": ["jwk": .object(attestationKey?.jwk ?? [:])]]
        return "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(claims.bytes) + ".c2ln"
    }

    static func reply(_ status: Int, _ json: JSONValue? = nil) -> WalletHTTP.Reply {
        var fields = HeaderFields()
        if json != nil { fields.add("content-type", "application/json") }
        return WalletHTTP.Reply(status: status, body: json?.bytes ?? [], headers: fields)
    }
}
