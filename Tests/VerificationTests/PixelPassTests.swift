import CBOR
import COSE
import Cryptography
import JSON
import MDoc
import SDJWT
import StatusList
import Support
import TestSupport
@testable import Verification
import XCTest

/// PixelPass (MOSIP Inji's offline QR encoding): base45 as RFC 9285 defines it, the zlib and
/// CBOR layers as MOSIP's library applies them, the bounds, and the verifier's offline checks.
final class PixelPassTests: XCTestCase {
    /// RFC 9285 §4.3 and §4.4's examples.
    func testBase45RFC9285Examples() throws {
        XCTAssertEqual(Base45.encode(Array("AB".utf8)), "BB8")
        XCTAssertEqual(Base45.encode(Array("Hello!!".utf8)), "%69 VD92EX0")
        XCTAssertEqual(Base45.encode(Array("base-45".utf8)), "UJCLQE7W581")
        XCTAssertEqual(try Base45.decode("QED8WEX0"), Array("ietf!".utf8))
        XCTAssertEqual(try Base45.decode(""), [])
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 255) }
            XCTAssertEqual(try Base45.decode(Base45.encode(bytes)), bytes)
        }
    }

    func testBase45Refusals() {
        XCTAssertThrowsError(try Base45.decode("abc")) { XCTAssertEqual($0 as? Base45.DecodingError, .invalidCharacter(offset: 0)) }
        XCTAssertThrowsError(try Base45.decode("ABCD")) { XCTAssertEqual($0 as? Base45.DecodingError, .invalidLength(4)) }
        XCTAssertThrowsError(try Base45.decode("GGW")) { XCTAssertEqual($0 as? Base45.DecodingError, .outOfRange(offset: 0)) }
        XCTAssertThrowsError(try Base45.decode("::")) { XCTAssertEqual($0 as? Base45.DecodingError, .outOfRange(offset: 0)) }
        XCTAssertThrowsError(try Base45.decode("A\u{e9}")) { XCTAssertEqual($0 as? Base45.DecodingError, .invalidCharacter(offset: 1)) }
    }

    func testTextAndJSONRoundTrips() throws {
        let sdJWT = "eyJhbGciOiJFUzI1NiJ9.eyJ2Y3QiOiJ4In0.c2ln~WyJzIiwiYSIsMV0~"
        XCTAssertEqual(try PixelPass.decode(PixelPass.encode(sdJWT)), .text(sdJWT))
        // JSON is CBOR-encoded first (MOSIP pixelpass: JSON.parse then cbor.encode).
        let json = #"{"name": "Erika", "age": 42, "score": 1.5, "ok": true, "none": null, "list": [-3, "x"]}"#
        let encoded = PixelPass.encode(json)
        let inflated = try StatusList.inflate(try Base45.decode(encoded), maximumBytes: 1 << 20)
        XCTAssertEqual(inflated.first.map { $0 >> 5 }, 5, "a CBOR map inside")
        XCTAssertEqual(try PixelPass.decode(encoded), .json(try JSONValue.parse(json)))
        XCTAssertEqual(Array(try Base45.decode(encoded).prefix(2)), [0x78, 0xDA], "a zlib stream (RFC 1950) at level 9")
    }

    /// Our JSON PixelPass decoded independently: `base45` + zlib + `cbor2` from PyPI, as MOSIP's
    /// decoder does it (base45, inflate, CBOR), gives the JSON back.
    func testJSONPixelPassDecodesWithPythonLibraries() throws {
        let json = #"{"credential": "eyJ.x.y~", "n": 7, "neg": -300, "f": 2.5, "flags": [true, false, null], "ü": {"a": "b"}}"#
        let script = """
            import json, sys, zlib
            try:
                import base45, cbor2
            except ImportError:
                sys.exit(3)
            raw = base45.b45decode(sys.stdin.read().strip())
            assert raw[:2] == b"\\x78\\xda", raw[:2]
            print(json.dumps(cbor2.loads(zlib.decompress(raw)), sort_keys=True))
            """
        let output = try PythonRunner.run(script, input: PixelPass.encode(json))
        XCTAssertEqual(try JSONValue.parse(Array(output.utf8)), try JSONValue.parse(Array(json.utf8)))
    }

    func testBombsAndGarbageAreRefusedWithTheReason() throws {
        func pack(_ bytes: [UInt8]) throws -> String { Base45.encode(try StatusList.deflate(bytes)) }
        XCTAssertThrowsError(try PixelPass.decode(try pack([UInt8](repeating: 0, count: (1 << 20) + 1)))) {
            XCTAssertEqual($0 as? PixelPass.DecodingError, .tooLarge(limit: 1 << 20))
        }
        XCTAssertThrowsError(try PixelPass.decode(Base45.encode(Array("not zlib".utf8)))) {
            guard case .notZlib = $0 as? PixelPass.DecodingError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try PixelPass.decode(try pack([0xA2, 0x61, 0x61, 0x01]))) {
            guard case .invalidCBOR = $0 as? PixelPass.DecodingError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try PixelPass.decode(try pack([UInt8](repeating: 0x81, count: 10_000) + [0]))) {
            guard case .invalidCBOR = $0 as? PixelPass.DecodingError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try PixelPass.decode(try pack(CBORValue.map([CBORMapEntry(.unsigned(1), .null)]).encoded()))) {
            guard case .invalidCBOR = $0 as? PixelPass.DecodingError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try PixelPass.decode(try pack([0xFF, 0xFE, 0x00]))) {
            XCTAssertEqual($0 as? PixelPass.DecodingError, .notText)
        }
    }

    // MARK: the verifier

    func testSDJWTVerifiedOfflineWithoutKeyBinding() throws {
        let fixture = try VerifierFixture.make()
        let holder = try PrivateKey(generatingFor: .ES256)
        let credential = try fixture.issuer.issue(holder: holder, now: fixture.clock.now())
        let wrapped = JSONValue.object(["credentials": [["credential": .string(credential.serialized)]]]).serialized()
        for text in [PixelPass.encode(credential.serialized),
                     PixelPass.encode(JSONValue.object(["credential": .string(credential.serialized)]).serialized()),
                     Base45.encode(try StatusList.deflate(Array(wrapped.utf8)))] {
            let result = try fixture.verifier.verifyPixelPass(text)
            XCTAssertTrue(result.report.verified, "\(result.report.checks)")
            XCTAssertEqual(result.format, "dc+sd-jwt")
            XCTAssertEqual(result.report.checks.map(\.name), ["format", "issuer_trust", "issuer_signature", "disclosures", "status"])
            XCTAssertEqual(result.notApplicable.map(\.name), ["key_binding", "claims"])
            XCTAssertEqual(result.report.claims["urn:eudi:pid:1"]?["given_name"], "Erika")
        }
    }

    func testSDJWTRefusals() throws {
        let fixture = try VerifierFixture.make()
        let holder = try PrivateKey(generatingFor: .ES256)
        let credential = try fixture.issuer.issue(holder: holder, now: fixture.clock.now())
        fixture.statusLists.revoked.withLock { $0 = [3] }
        var result = try fixture.verifier.verifyPixelPass(PixelPass.encode(credential.serialized))
        XCTAssertEqual(result.report.checks.last?.name, "status")
        XCTAssertFalse(result.report.verified)
        XCTAssertEqual(result.json["claims"], .object([:]), "no claims from a refused credential")

        let other = try TestIssuer().issue(holder: holder, now: fixture.clock.now())
        result = try fixture.verifier.verifyPixelPass(PixelPass.encode(other.serialized))
        XCTAssertEqual(result.report.checks.last.map { [$0.name, "\($0.ok)"] }, ["issuer_signature", "false"], "signed by another key")

        fixture.clock.advance(2 * 86_400)
        result = try fixture.verifier.verifyPixelPass(PixelPass.encode(credential.serialized))
        XCTAssertEqual(result.report.checks.last.map { [$0.name, "\($0.ok)"] }, ["validity", "false"])

        let refusing = try VerifierFixture.make(refuseIssuer: true)
        result = try refusing.verifier.verifyPixelPass(PixelPass.encode(try refusing.issuer.issue(holder: holder, now: refusing.clock.now()).serialized))
        XCTAssertEqual(result.report.checks.last.map { [$0.name, "\($0.ok)"] }, ["issuer_trust", "false"])
    }

    func testNotACredentialIsInvalidRequest() throws {
        let fixture = try VerifierFixture.make()
        for text in ["lower case", PixelPass.encode("plain text"), PixelPass.encode(#"{"type": ["VerifiableCredential"]}"#),
                     String(repeating: "A", count: Verifier.maximumPixelPassLength + 3)] {
            XCTAssertThrowsError(try fixture.verifier.verifyPixelPass(text)) {
                XCTAssertEqual(($0 as? VerificationError)?.codeValue, .invalidRequest, text.prefix(40).description)
            }
        }
    }

    /// An mdoc IssuerSigned under a configured IACA: issuer data authentication, no device
    /// authentication (nothing to sign offline); a tampered element fails its digest.
    func testMDocIssuerSignedVerifiedOffline() throws {
        let now: Int64 = 1_800_000_000
        let iacaKey = try PrivateKey(generatingFor: .ES256)
        let iaca = try AnnexB.makeIACA(key: iacaKey, country: "DE", organization: "Trustbed", commonName: "Test IACA",
                                       issuerAltName: .uri("https://pid.example"), crlURL: "https://pid.example/iaca.crl",
                                       validity: .init(notBefore: now - 86_400, notAfter: now + 365 * 86_400))
        let signerKey = try PrivateKey(generatingFor: .ES256)
        let ds = try AnnexB.makeDocumentSigner(
            subjectKey: signerKey.publicKey, iaca: iaca, iacaKey: iacaKey, organization: "Trustbed", commonName: "Test DS",
            issuerAltName: .uri("https://pid.example"), crlURL: "https://pid.example/iaca.crl",
            validity: .init(notBefore: now - 86_400, notAfter: now + 300 * 86_400))
        let issuerSigned = try IssuerSigned.issue(
            docType: EUDIPID.docType,
            nameSpaces: [EUDIPID.nameSpace: [("family_name", "Mustermann"), ("given_name", "Erika")]],
            deviceKey: COSEKey(publicKey: try PrivateKey(generatingFor: .ES256).publicKey),
            validity: ValidityInfo(signed: now - 60, validFrom: now - 60, validUntil: now + 90 * 86_400),
            signer: try DocumentSigner(key: signerKey, certificateChain: [ds]))
        let fixture = try VerifierFixture.make(refuseIssuer: true, issuerRoots: [iaca])
        let result = try fixture.verifier.verifyPixelPass(PixelPass.encode(issuerSigned.base64URL))
        XCTAssertTrue(result.report.verified, "\(result.report.checks)")
        XCTAssertEqual(result.format, "mso_mdoc")
        XCTAssertEqual(result.report.checks.map(\.name), ["format", "issuer_trust", "issuer_authentication", "status"])
        XCTAssertEqual(result.notApplicable.map(\.name), ["device_authentication", "claims"])
        XCTAssertEqual(result.report.claims[EUDIPID.docType]?[EUDIPID.nameSpace]?["given_name"], "Erika")

        // given_name's item swapped for family_name's value: its digest no longer matches.
        var items = issuerSigned.nameSpaces[EUDIPID.nameSpace]!
        let forged = try IssuerSigned.issue(
            docType: EUDIPID.docType, nameSpaces: [EUDIPID.nameSpace: [("family_name", "Other"), ("given_name", "Erika")]],
            deviceKey: COSEKey(publicKey: try PrivateKey(generatingFor: .ES256).publicKey),
            validity: ValidityInfo(signed: now - 60, validFrom: now - 60, validUntil: now + 90 * 86_400),
            signer: try DocumentSigner(key: signerKey, certificateChain: [ds]))
        items = items.map { $0.item.elementIdentifier == "family_name"
            ? forged.nameSpaces[EUDIPID.nameSpace]!.first { $0.item.elementIdentifier == "family_name" }! : $0 }
        let tampered = IssuerSigned(nameSpaces: [EUDIPID.nameSpace: items], issuerAuth: issuerSigned.issuerAuth)
        let refused = try fixture.verifier.verifyPixelPass(PixelPass.encode(tampered.base64URL))
        XCTAssertEqual(refused.report.checks.last.map { [$0.name, "\($0.ok)"] }, ["issuer_authentication", "false"])

        // Without a configured root or a federation: untrusted.
        let untrusting = try VerifierFixture.make(refuseIssuer: true)
        let untrusted = try untrusting.verifier.verifyPixelPass(PixelPass.encode(issuerSigned.base64URL))
        XCTAssertEqual(untrusted.report.checks.last.map { [$0.name, "\($0.ok)"] }, ["issuer_trust", "false"])
    }
}
