import Foundation
import JOSE
import JSON
import Support
@testable import Wallet
import XCTest

/// The CLI's test wallet (issue 20 item 9): its file, attestation-based client authentication
/// (draft-ietf-oauth-attestation-based-client-auth §5), attested key proofs (OpenID4VCI 1.0
/// Appendix D and F.1) and the Wallet Provider requests (docs/wallet-provider.md).
final class TestWalletTests: XCTestCase {
    var directory: String!

    override func setUp() {
        directory = NSTemporaryDirectory() + "testwallet-\(UUID().uuidString)"
    }

    /// The compact JWS's ES256 signature checked with `key`'s public key.
    static func verifies(_ compact: String, _ key: HolderKey) throws -> Bool {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let signature = Base64URL.decode(parts[2]) else { return false }
        return try JWK(json: key.jwk).publicKey().verify(signature: signature, data: Array((parts[0] + "." + parts[1]).utf8), algorithm: .ES256)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: directory) }

    func testFileRoundTripsWithMode0600AndSaysItIsATestWallet() throws {
        let key = try HolderKey()
        var file = TestWalletFile(path: directory + "/a/wallet.json")
        file.hardwareKey = try key.privateJWK()
        file.hardwareKeyTag = "tag-1"
        file.provider = "https://wp.example"
        file.trustAnchor = "https://ta.example"
        file.state = "installed"
        file.attestations = ["jwt": "a.b.c"]
        try file.save()
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let raw = try JSONValue.parse(Array(FileManager.default.contents(atPath: file.path)!)).objectValue!
        XCTAssertEqual(raw["type"]?.stringValue, "trustbed-test-wallet")
        XCTAssertTrue(raw["about"]!.stringValue!.contains("TEST wallet"))
        let loaded = try TestWalletFile.load(file.path)
        XCTAssertEqual(loaded.hardwareKeyTag, "tag-1")
        XCTAssertEqual(loaded.provider, "https://wp.example")
        XCTAssertEqual(loaded.trustAnchor, "https://ta.example")
        XCTAssertEqual(loaded.attestations["jwt"]?.stringValue, "a.b.c")
        // The key survives the file: same public key.
        XCTAssertEqual(try HolderKey(privateJWK: loaded.hardwareKey!).jwk, key.jwk)
        XCTAssertEqual(loaded.hardwareKey?["d"]?.stringValue?.count, 43)
    }

    func testPrivateJWKWithAForeignPointOrBadPartsIsRefused() throws {
        var jwk = try HolderKey().privateJWK()
        jwk["x"] = try HolderKey().jwk["x"]
        jwk["y"] = try HolderKey().jwk["y"]
        XCTAssertThrowsError(try HolderKey(privateJWK: jwk))
        var short = try HolderKey().privateJWK()
        short["d"] = "AAAA"
        XCTAssertThrowsError(try HolderKey(privateJWK: short))
        var rsa = try HolderKey().privateJWK()
        rsa["kty"] = "RSA"
        XCTAssertThrowsError(try HolderKey(privateJWK: rsa))
        // The key signs as it did before it was written out.
        let key = try HolderKey()
        let again = try HolderKey(privateJWK: try key.privateJWK())
        XCTAssertTrue(try Self.verifies(try again.sign(header: ["typ": "x"], claims: [:]), key))
    }

    func testMissingFileIsAnEmptyWalletAndAForeignFileIsRefused() throws {
        XCTAssertNil(try TestWalletFile.load(directory + "/none.json").hardwareKeyTag)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: directory + "/x.json", contents: Data("{\"a\":1}".utf8))
        XCTAssertThrowsError(try TestWalletFile.load(directory + "/x.json"))
        _ = FileManager.default.createFile(atPath: directory + "/y.json", contents: Data("not json".utf8))
        XCTAssertThrowsError(try TestWalletFile.load(directory + "/y.json"))
    }

    func testDefaultPathFollowsXDG() {
        XCTAssertEqual(TestWalletFile.defaultPath(environment: ["XDG_DATA_HOME": "/x", "HOME": "/h"]), "/x/trustbed/wallet.json")
        XCTAssertEqual(TestWalletFile.defaultPath(environment: ["HOME": "/h"]), "/h/.local/share/trustbed/wallet.json")
        XCTAssertEqual(TestWalletFile.defaultPath(environment: ["XDG_DATA_HOME": "", "HOME": "/h"]), "/h/.local/share/trustbed/wallet.json")
    }

    /// A wallet file with a (self-made) wallet attestation whose sub is `client`.
    func attestedWallet(client: String = "client-1", exp: Int64? = nil) throws -> (TestWalletFile, HolderKey) {
        let walletKey = try HolderKey()
        let provider = try HolderKey()
        let jwt = try provider.sign(header: ["typ": "oauth-client-attestation+jwt"],
                                    claims: ["iss": "https://wp.example", "sub": .string(client), "cnf": ["jwk": .object(walletKey.jwk)],
                                             "exp": .int(exp ?? WalletProofs.now() + 3600)])
        var file = TestWalletFile(path: directory + "/w.json")
        file.walletKey = try walletKey.privateJWK()
        file.attestations = ["jwt": .string(jwt)]
        return (file, walletKey)
    }

    func testClientAttestationPoPIsSignedByTheWalletKey() throws {
        let (file, walletKey) = try attestedWallet()
        let client = try AttestedClient(wallet: file)
        XCTAssertEqual(client.clientID, "client-1")
        let headers = try client.headers(audience: "https://as.example")
        XCTAssertEqual(headers[0], "OAuth-Client-Attestation: " + file.attestations["jwt"]!.stringValue!)
        let pop = try JWS.parse(String(headers[1].dropFirst("OAuth-Client-Attestation-PoP: ".count)))
        XCTAssertEqual(pop.type, "oauth-client-attestation-pop+jwt")
        XCTAssertTrue(try Self.verifies(String(headers[1].dropFirst("OAuth-Client-Attestation-PoP: ".count)), walletKey))
        let claims = try pop.payload()
        XCTAssertEqual(claims["iss"]?.stringValue, "client-1")
        XCTAssertEqual(claims["aud"]?.stringValue, "https://as.example")
        XCTAssertNotNil(claims["jti"]?.stringValue)
        XCTAssertNotNil(claims["iat"]?.intValue)
    }

    func testExpiredOrMissingAttestationIsAUsageError() throws {
        XCTAssertThrowsError(try AttestedClient(wallet: TestWalletFile(path: directory + "/none.json")))
        XCTAssertThrowsError(try AttestedClient(wallet: try attestedWallet(exp: 1000).0))
    }

    func testSessionSendsTheAttestationAtTheTokenEndpointAndAttestedProofs() throws {
        let stub = StubTransport { request in
            request.url.hasSuffix("/token") ? StubTransport.reply(200, ["access_token": "at", "token_type": "Bearer"])
                : StubTransport.reply(200, ["credentials": [["credential": "x"], ["credential": "y"]]])
        }
        let (file, _) = try attestedWallet()
        let client = try AttestedClient(wallet: file)
        let session = try WalletSession(context: try WalletSessionTests.context(), http: try WalletHTTP(transport: stub), dpop: false)
        session.clientID = client.clientID
        session.clientAttestation = client.headers
        var attested: [[String: JSONValue]] = []
        var seenNonce: String?
        session.keyAttester = { keys, nonce in
            attested = keys.map(\.jwk)
            seenNonce = nonce
            return "ka.jwt.x"
        }
        _ = try session.preAuthorizedToken(code: "c", txCode: nil)
        let token = stub.requests[0]
        XCTAssertNotNil(token.header("OAuth-Client-Attestation"))
        XCTAssertNotNil(token.header("OAuth-Client-Attestation-PoP"))
        XCTAssertTrue(String(decoding: token.body!, as: UTF8.self).contains("client_id=client-1"))
        let keys = [try HolderKey(), try HolderKey()]
        _ = try session.credential(accessToken: "at", configurationID: "pid", identifier: nil, keys: keys, nonce: "cn")
        // The resource server gets no client attestation; the proofs carry the key attestation.
        let request = stub.requests.last!
        XCTAssertNil(request.header("OAuth-Client-Attestation"))
        XCTAssertEqual(attested, keys.map(\.jwk))
        XCTAssertEqual(seenNonce, "cn")
        let body = try JSONValue.parse(request.body!).objectValue!
        let proofs = body["proofs"]!.objectValue!["jwt"]!.arrayValue!.map { $0.stringValue! }
        for (index, proof) in proofs.enumerated() {
            let jws = try JWS.parse(proof)
            XCTAssertEqual(jws.keyID, String(index))
            XCTAssertEqual(jws.header["key_attestation"]?.stringValue, "ka.jwt.x")
            XCTAssertNil(jws.header["jwk"])
            XCTAssertTrue(try Self.verifies(proof, keys[index]))
            XCTAssertEqual(try jws.payload()["nonce"]?.stringValue, "cn")
            XCTAssertEqual(try jws.payload()["iss"]?.stringValue, "client-1")
        }
    }

    func testProviderRequestsCarryTheBindingsTheProviderChecks() throws {
        let provider = "https://wp.example"
        let hardware = try HolderKey()
        let walletKey = try HolderKey()
        var nonces = 0
        let stub = StubTransport { request in
            if request.url.hasSuffix("/nonce") { nonces += 1; return StubTransport.reply(200, ["nonce": .string("n\(nonces)")]) }
            if request.url.hasSuffix("/dev/key-attestation") { return StubTransport.reply(200, ["key_attestation": "dev.ka.jwt"]) }
            if request.url.hasSuffix("/wallet-attestations") {
                return StubTransport.reply(200, ["wallet_attestations": [["format": "jwt", "wallet_attestation": "wa.jwt.x"]]])
            }
            if request.url.hasSuffix("/key-attestations") { return StubTransport.reply(200, ["key_attestation": "kat.jwt.x"]) }
            return StubTransport.reply(404, ["error": "not_found"])
        }
        var traced: [String] = []
        let http = try WalletHTTP(transport: stub)
        http.trace = { traced.append($0) }
        let client = WalletProviderClient(provider: provider + "/", http: http)
        XCTAssertEqual(try client.walletAttestations(hardwareKey: hardware, tag: "t", walletKey: walletKey, integrity: "pass", legacy: false),
                       ["jwt": "wa.jwt.x"])
        let request = try JSONValue.parse(stub.requests.last!.body!).objectValue!
        let war = try JWS.parse(request["assertion"]!.stringValue!)
        XCTAssertEqual(war.type, "wp-war+jwt")
        XCTAssertEqual(war.keyID, walletKey.thumbprint)
        XCTAssertTrue(try Self.verifies(request["assertion"]!.stringValue!, walletKey))
        let claims = try war.payload()
        XCTAssertEqual(claims["iss"]?.stringValue, "\(provider)/instance/\(walletKey.thumbprint)")
        XCTAssertEqual(claims["aud"]?.stringValue, provider)
        XCTAssertEqual(claims["challenge"]?.stringValue, "n1")
        XCTAssertEqual(claims["key_attestation"]?.stringValue, "dev.ka.jwt")
        // hardware_signature: the hardware key over {"challenge","jwk_thumbprint"} in that order.
        let signed = Array("{\"challenge\":\"n1\",\"jwk_thumbprint\":\"\(walletKey.thumbprint)\"}".utf8)
        let signature = try XCTUnwrap(Base64URL.decode(claims["hardware_signature"]!.stringValue!))
        XCTAssertTrue(try JWK(json: hardware.jwk).publicKey().verify(signature: signature, data: signed, algorithm: .ES256))
        // A key attestation request: signed by the hardware key, kid = the tag.
        _ = try client.keyAttestation(hardwareKey: hardware, tag: "t", keys: [walletKey], cNonce: "cn")
        let kar = try JWS.parse(try JSONValue.parse(stub.requests.last!.body!).objectValue!["assertion"]!.stringValue!)
        XCTAssertEqual(kar.type, "wp-kar+jwt")
        XCTAssertEqual(kar.keyID, "t")
        XCTAssertEqual(try kar.payload()["iss"]?.stringValue, "\(provider)/instance/t")
        XCTAssertEqual(try kar.payload()["c_nonce"]?.stringValue, "cn")
        // --verbose sees every exchange and no private key.
        XCTAssertEqual(traced.count, stub.requests.count * 2)
        XCTAssertFalse(traced.joined().contains(try hardware.privateJWK()["d"]!.stringValue!))
        XCTAssertFalse(traced.joined().contains(try walletKey.privateJWK()["d"]!.stringValue!))
        XCTAssertFalse(traced.joined().contains("\"d\""))
        // A refusal carries the server's JSON.
        XCTAssertThrowsError(try client.register(hardwareKey: hardware, tag: "t", integrity: "pass")) { error in
            XCTAssertTrue("\(error)".contains("not_found"), "\(error)")
        }
    }
}
