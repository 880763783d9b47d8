import Foundation
import XCTest
import TestSupport
import CBOR

/// Cross-checks against an independent implementation, Python's `cbor2`: it decodes what we
/// encode and re-encodes it canonically (which must give our bytes back), and it encodes its own
/// (non-canonical) samples, which we decode and encode to its canonical form. Skipped when no
/// Python with cbor2 is found (see `PythonRunner`).
///
/// cbor2's canonical mode sorts map keys length-first (RFC 7049 §3.9) where RFC 8949 §4.2.1
/// sorts bytewise; the two agree whenever keys are all text (or all integers) shorter than 24
/// bytes, as in every mdoc structure, so the samples stay within that.
final class CBOR2InteropTests: XCTestCase {
    static let ours: [CBORValue] = [
        ["version": "1.0", "digestAlgorithm": "SHA-256", "docType": "eu.europa.ec.eudi.pid.1",
         "valueDigests": ["eu.europa.ec.eudi.pid.1": [0: .bytes([1, 2]), 17: .bytes([3]), 1000: .bytes([])]],
         "validityInfo": ["signed": .dateTime(1_700_000_000), "validFrom": .dateTime(1_700_000_000)]],
        [1: 2, -1: 1, -2: .bytes([UInt8](repeating: 0xab, count: 32)), -3: .bytes([UInt8](repeating: 0xcd, count: 32))],
        [0.0, -0.0, 1.5, 65504.0, 100000.0, 1.1, .float(.infinity), 5.960464477539063e-8],
        [.unsigned(.max), .negative(.max), 0, -1, 23, 24, 255, 256, 65536, 4_294_967_296],
        .embedded(["digestID": 3, "random": .bytes([0, 1, 2]), "elementIdentifier": "age_over_18", "elementValue": true]),
        [.undefined, nil, false, .simple(200), "ü水𐅑", .bytes([])],
    ]

    static let script = #"""
import sys
try:
    import cbor2
except ImportError:
    sys.exit(3)
lines = sys.stdin.read().split()
for line in lines:
    print(cbor2.dumps(cbor2.loads(bytes.fromhex(line)), canonical=True).hex())
print("---")
samples = [
    {"given_name": "Erika", "family_name": "Mustermann", "age_in_years": 40, "nationalities": ["DE", "FR"]},
    {1: -7, 4: b"11", 33: [b"\x30\x01", b"\x30\x02"]},
    [1.0, 2.5, -4.0, 3.4028234663852886e38, 1e300, 0.1],
    cbor2.CBORTag(24, cbor2.dumps({"a": [1, 2, {"b": None}]})),
]
for s in samples:
    print(cbor2.dumps(s).hex(), cbor2.dumps(s, canonical=True).hex())
"""#

    func testEncodingsAgreeWithCBOR2() throws {
        let output = try PythonRunner.run(Self.script, input: Self.ours.map { hexString($0.encoded()) }.joined(separator: "\n"))
        let parts = output.components(separatedBy: "---")
        XCTAssertEqual(parts.count, 2)
        let canonical = parts[0].split(separator: "\n").map(String.init)
        XCTAssertEqual(canonical.count, Self.ours.count)
        for (value, theirs) in zip(Self.ours, canonical) {
            XCTAssertEqual(hexString(value.encoded()), theirs, "\(value)")
        }
        let samples = parts[1].split(separator: "\n")
        XCTAssertEqual(samples.count, 4)
        for line in samples {
            let pair = line.split(separator: " ").map(String.init)
            let decoded = try CBORValue.decode(bytes(pair[0]))
            XCTAssertEqual(hexString(decoded.encoded()), pair[1], "\(decoded)")
        }
    }
}
