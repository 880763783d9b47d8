import Cryptography
import Foundation
import TestSupport
import XCTest

/// HPKE base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM: RFC 9180's published
/// vectors (Appendix A.3.1, Tests/Fixtures/hpke-rfc9180-a3-1.json) and round trips with pyhpke.
final class HPKETests: XCTestCase {
    private struct Vectors {
        let setup: [String: Any]
        let encryptions: [[String: Any]]
        let exports: [[String: Any]]
        func hex(_ name: String) -> [UInt8] { hexBytes(setup[name] as! String) }
    }

    private func vectors() throws -> Vectors {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/hpke-rfc9180-a3-1.json")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        return Vectors(setup: json["setup"] as! [String: Any], encryptions: json["encryptions"] as! [[String: Any]],
                       exports: json["exports"] as! [[String: Any]])
    }

    private func key(d: [UInt8], point: [UInt8]) throws -> PrivateKey {
        try PrivateKey(ecCurve: "P-256", d: d, x: Array(point[1...32]), y: Array(point[33...64]))
    }

    /// The sender with the vector's ephemeral key gives the vector's enc, key, base nonce,
    /// exporter secret, every ciphertext (sequence numbers 0 to 256) and exported value.
    func testSenderMatchesRFC9180A31() throws {
        let v = try vectors()
        XCTAssertEqual(v.setup["mode"] as? Int, 0)
        XCTAssertEqual(v.setup["kem_id"] as? Int, 16)
        let recipient = try key(d: v.hex("skRm"), point: v.hex("pkRm"))
        let ephemeral = try key(d: v.hex("skEm"), point: v.hex("pkEm"))
        var (enc, context) = try HPKE.setupBaseSender(recipient: recipient.publicKey, info: v.hex("info"), ephemeral: ephemeral)
        XCTAssertEqual(enc, v.hex("enc"))
        XCTAssertEqual(context.key, v.hex("key"))
        XCTAssertEqual(context.baseNonce, v.hex("base_nonce"))
        XCTAssertEqual(context.exporterSecret, v.hex("exporter_secret"))
        var checked = 0
        for encryption in v.encryptions {
            let sequence = encryption["sequence number"] as! Int
            while context.sequenceNumber < UInt64(sequence) { _ = try context.seal([]) }
            let ct = try context.seal(hexBytes(encryption["pt"] as! String), aad: hexBytes(encryption["aad"] as! String))
            XCTAssertEqual(hexString(ct), encryption["ct"] as? String, "sequence number \(sequence)")
            checked += 1
        }
        XCTAssertEqual(checked, 6)
        for export in v.exports {
            let value = try context.export(context: hexBytes(export["exporter_context"] as! String), length: export["L"] as! Int)
            XCTAssertEqual(hexString(value), export["exported_value"] as? String)
        }
    }

    /// The recipient opens every vector ciphertext in sequence; a flipped tag, a wrong info or
    /// aad, a truncated or off-curve enc are refused.
    func testRecipientOpensRFC9180A31AndRefusesTampering() throws {
        let v = try vectors()
        let recipient = try key(d: v.hex("skRm"), point: v.hex("pkRm"))
        var context = try HPKE.setupBaseRecipient(enc: v.hex("enc"), recipient: recipient, info: v.hex("info"))
        var sealer = try HPKE.setupBaseSender(recipient: recipient.publicKey, info: v.hex("info"),
                                              ephemeral: try key(d: v.hex("skEm"), point: v.hex("pkEm"))).context
        for encryption in v.encryptions {
            let sequence = encryption["sequence number"] as! Int
            // Skipped sequence numbers: advance the recipient with the sender's messages.
            while context.sequenceNumber < UInt64(sequence) { _ = try context.open(try sealer.seal([])) }
            _ = try sealer.seal([])
            let pt = try context.open(hexBytes(encryption["ct"] as! String), aad: hexBytes(encryption["aad"] as! String))
            XCTAssertEqual(hexString(pt), encryption["pt"] as? String)
        }

        let first = v.encryptions[0]
        let ct = hexBytes(first["ct"] as! String), aad = hexBytes(first["aad"] as! String)
        XCTAssertEqual(try HPKE.open(ct, enc: v.hex("enc"), recipient: recipient, info: v.hex("info"), aad: aad),
                       hexBytes(first["pt"] as! String))
        var badTag = ct
        badTag[badTag.count - 1] ^= 1
        XCTAssertThrowsError(try HPKE.open(badTag, enc: v.hex("enc"), recipient: recipient, info: v.hex("info"), aad: aad)) {
            XCTAssertEqual($0 as? CipherError, .authenticationFailed)
        }
        XCTAssertThrowsError(try HPKE.open(ct, enc: v.hex("enc"), recipient: recipient, info: [1], aad: aad)) {
            XCTAssertEqual($0 as? CipherError, .authenticationFailed)
        }
        XCTAssertThrowsError(try HPKE.open(ct, enc: v.hex("enc"), recipient: recipient, info: v.hex("info"), aad: [])) {
            XCTAssertEqual($0 as? CipherError, .authenticationFailed)
        }
        XCTAssertThrowsError(try HPKE.open(ct, enc: Array(v.hex("enc").prefix(64)), recipient: recipient, info: v.hex("info"))) {
            guard case .keyAgreementFailed = $0 as? CipherError else { return XCTFail("\($0)") }
        }
        var offCurve = v.hex("enc")
        offCurve[64] ^= 1
        XCTAssertThrowsError(try HPKE.open(ct, enc: offCurve, recipient: recipient, info: v.hex("info"))) {
            guard case .keyAgreementFailed = $0 as? CipherError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try HPKE.open([1, 2, 3], enc: v.hex("enc"), recipient: recipient, info: v.hex("info"))) {
            XCTAssertEqual($0 as? CipherError, .invalidTagLength(3))
        }
    }

    func testSingleShotRoundTripWithFreshEphemeralKey() throws {
        let recipient = try PrivateKey(generatingECCurve: "P-256")
        let message = Array("identity".utf8)
        let a = try HPKE.seal(message, to: recipient.publicKey, info: [9, 9])
        let b = try HPKE.seal(message, to: recipient.publicKey, info: [9, 9])
        XCTAssertNotEqual(a.enc, b.enc, "a fresh ephemeral key per message")
        XCTAssertEqual(a.enc.count, 65)
        XCTAssertEqual(a.ciphertext.count, message.count + 16)
        XCTAssertEqual(try HPKE.open(a.ciphertext, enc: a.enc, recipient: recipient, info: [9, 9]), message)
        let other = try PrivateKey(generatingECCurve: "P-256")
        XCTAssertThrowsError(try HPKE.open(a.ciphertext, enc: a.enc, recipient: other, info: [9, 9]))
    }

    /// Both directions with pyhpke (PyPI): pyhpke seals to our key and we open; we seal and pyhpke opens.
    func testInteroperatesWithPyHPKE() throws {
        let recipient = try PrivateKey(generatingECCurve: "P-256")
        guard case .ec(_, let x, let y) = recipient.publicKey.components else { return XCTFail() }
        let ours = try HPKE.seal(Array("from swift".utf8), to: recipient.publicKey, info: Array("info".utf8), aad: [7])
        let pem = try recipient.pemPKCS8()
        let script = """
        import sys, json
        try:
            from pyhpke import CipherSuite, KEMId, KDFId, AEADId
            from cryptography.hazmat.primitives import serialization
        except ImportError:
            sys.exit(3)
        d = json.load(sys.stdin)
        suite = CipherSuite.new(KEMId.DHKEM_P256_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)
        sk = serialization.load_pem_private_key(d["pem"].encode(), None)
        skR = suite.kem.deserialize_private_key(sk.private_numbers().private_value.to_bytes(32, "big"))
        pkR = suite.kem.deserialize_public_key(bytes.fromhex(d["pk"]))
        recipient = suite.create_recipient_context(bytes.fromhex(d["enc"]), skR, info=b"info")
        opened = recipient.open(bytes.fromhex(d["ct"]), aad=b"\\x07")
        enc, sender = suite.create_sender_context(pkR, info=b"info")
        ct = sender.seal(b"from python", aad=b"\\x08")
        print(json.dumps({"opened": opened.decode(), "enc": enc.hex(), "ct": ct.hex()}))
        """
        let input = "{\"pem\": \(jsonString(pem)), \"pk\": \"\(hexString([0x04] + x + y))\", "
            + "\"enc\": \"\(hexString(ours.enc))\", \"ct\": \"\(hexString(ours.ciphertext))\"}"
        let output = try PythonRunner.run(script, input: input)
        let answer = try JSONSerialization.jsonObject(with: Data(output.utf8)) as! [String: String]
        XCTAssertEqual(answer["opened"], "from swift")
        let opened = try HPKE.open(hexBytes(answer["ct"]!), enc: hexBytes(answer["enc"]!), recipient: recipient,
                                   info: Array("info".utf8), aad: [8])
        XCTAssertEqual(String(decoding: opened, as: UTF8.self), "from python")
    }

    private func jsonString(_ s: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [s]), as: UTF8.self).dropFirst().dropLast().description
    }
}
