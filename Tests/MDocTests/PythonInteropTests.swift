import Foundation
import XCTest
import TestSupport
import CBOR
import COSE
import Cryptography
import MDoc

/// Checks what we issue with independent implementations: `cbor2` decodes the IssuerSigned and
/// recomputes every value digest over the tag-24 item bytes, `pycose` verifies issuerAuth with
/// the key of the DS certificate, `cryptography` checks the DS was issued by the IACA, and
/// `pymdoccbor` (the EUDI reference library) verifies the whole document against the IACA.
/// Skipped when no Python with these modules is found (see `PythonRunner`).
final class PythonInteropTests: XCTestCase {
    static let script = #"""
import sys, json, hashlib, datetime
try:
    import cbor2
    from cryptography import x509
    from pycose.messages import Sign1Message
    from pycose.keys import EC2Key
    from pycose.keys.curves import P256
    from pymdoccbor.mdoc.verifier import MobileDocument
except ImportError:
    sys.exit(3)

issuer_signed_hex, iaca_hex, doc_type = sys.stdin.read().split()
raw = bytes.fromhex(issuer_signed_hex)
iaca = x509.load_der_x509_certificate(bytes.fromhex(iaca_hex))
issuer_signed = cbor2.loads(raw)
report = {}

issuer_auth = issuer_signed["issuerAuth"]
mso_tag = cbor2.loads(issuer_auth[2])
assert isinstance(mso_tag, cbor2.CBORTag) and mso_tag.tag == 24
mso = cbor2.loads(mso_tag.value)
report["version"] = mso["version"]
report["digestAlgorithm"] = mso["digestAlgorithm"]
report["docType"] = mso["docType"]
report["status"] = mso.get("status")
report["validity"] = {k: v.isoformat() for k, v in mso["validityInfo"].items()}

checked = 0
for ns, items in issuer_signed["nameSpaces"].items():
    ids = []
    for tagged in items:
        assert isinstance(tagged, cbor2.CBORTag) and tagged.tag == 24
        item = cbor2.loads(tagged.value)
        ids.append(item["digestID"])
        assert hashlib.sha256(cbor2.dumps(tagged)).digest() == mso["valueDigests"][ns][item["digestID"]], item
        if item["elementIdentifier"] == "birth_date":
            report["birth_date"] = [type(item["elementValue"]).__name__, item["elementValue"].isoformat()]
        checked += 1
    assert len(set(ids)) == len(ids)
report["digests_checked"] = checked

x5chain = issuer_auth[1][33]
ds = x509.load_der_x509_certificate(x5chain)
ds.verify_directly_issued_by(iaca)
numbers = ds.public_key().public_numbers()
# cbor2 6 decodes arrays as tuples; pycose takes the untagged array as a list.
message = Sign1Message.from_cose_obj(list(issuer_auth), True)
message.key = EC2Key(crv=P256, x=numbers.x.to_bytes(32, "big"), y=numbers.y.to_bytes(32, "big"))
report["pycose_signature"] = message.verify_signature()

device_key = mso["deviceKeyInfo"]["deviceKey"]
report["device_key"] = {"kty": device_key[1], "crv": device_key[-1], "x": device_key[-2].hex(), "y": device_key[-3].hex()}

document = MobileDocument(docType=doc_type, issuerSigned=issuer_signed)
report["pymdoccbor"] = document.verify(trusted_root_certs=[iaca], verify_hashes=True)
report["pymdoccbor_hashes"] = document.hash_verification["verified"]
print(json.dumps(report, default=str))
"""#

    func testPythonLibrariesVerifyOurIssuerSigned() throws {
        let fixture = try MDocFixture(signed: Int64(Date().timeIntervalSince1970))
        let issued = try fixture.issuePID()
        let input = [hex(issued.encoded()), hex(fixture.iaca.der), EUDIPID.docType].joined(separator: "\n")
        // Run outside XCTUnwrap: its autoclosure would turn the runner's XCTSkip (no Python with
        // these packages) into a failure.
        let output = try PythonRunner.run(Self.script, input: input)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])

        XCTAssertEqual(report["version"] as? String, "1.0")
        XCTAssertEqual(report["digestAlgorithm"] as? String, "SHA-256")
        XCTAssertEqual(report["docType"] as? String, EUDIPID.docType)
        XCTAssertEqual(report["digests_checked"] as? Int, MDocFixture.pidElements.count)
        XCTAssertEqual(report["birth_date"] as? [String], ["date", "1984-01-26"], "cbor2 reads tag 1004 as a date")
        let validity = try XCTUnwrap(report["validity"] as? [String: String])
        XCTAssertEqual(validity.keys.sorted(), ["signed", "validFrom", "validUntil"])
        XCTAssertTrue(validity["signed"]?.hasSuffix("+00:00") ?? false, "tag 0 decodes to an aware UTC datetime")
        let status = try XCTUnwrap(report["status"] as? [String: [String: Any]])
        XCTAssertEqual(status["status_list"]?["idx"] as? Int, 42)
        XCTAssertEqual(status["status_list"]?["uri"] as? String, MDocFixture.statusURI)
        XCTAssertEqual(report["pycose_signature"] as? Bool, true)
        guard case .ec(_, let x, let y) = fixture.deviceKey.publicKey.components else { return XCTFail("EC key expected") }
        let deviceKey = try XCTUnwrap(report["device_key"] as? [String: Any])
        XCTAssertEqual(deviceKey["kty"] as? Int, 2)
        XCTAssertEqual(deviceKey["crv"] as? Int, 1)
        XCTAssertEqual(deviceKey["x"] as? String, hex(x))
        XCTAssertEqual(deviceKey["y"] as? String, hex(y))
        XCTAssertEqual(report["pymdoccbor"] as? Bool, true)
        XCTAssertEqual(report["pymdoccbor_hashes"] as? Int, MDocFixture.pidElements.count)
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
