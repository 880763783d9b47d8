import JSON
import StatusList
import XCTest
import TestSupport

/// Independent decoders: Python's `token-status-list` package when installed (else Python's
/// zlib with the bit layout written out in the script) reads our lists, and we read lists that
/// the package encodes.
final class StatusListInteropTests: XCTestCase {
    func testPythonDecodesOurListsAndWeDecodeTheirs() throws {
        var cases: [JSONValue] = []
        for bits in [1, 2, 4, 8] {
            var list = try StatusList(bits: bits, size: 4096)
            var expected: [String: JSONValue] = [:]
            for index in stride(from: 3, to: 4096, by: 61) {
                let value = UInt8((index / 61) % (1 << bits))
                try list.setStatus(StatusType(rawValue: value), at: index)
                expected[String(index)] = JSONValue(Int(value))
            }
            cases.append(["bits": JSONValue(bits), "lst": .string(try list.encodedList()), "expected": .object(expected)])
        }
        let output = try JSONValue.parse(PythonRunner.run(Self.script, input: JSONValue.array(cases).serialized()))
        XCTAssertEqual(output["mismatches"], [], "Python read our lists differently")

        for theirs in try XCTUnwrap(output["theirs"]?.arrayValue) {
            let bits = Int(try XCTUnwrap(theirs["bits"]?.intValue))
            let list = try StatusList(bits: bits, encodedList: XCTUnwrap(theirs["lst"]?.stringValue))
            for (index, value) in try XCTUnwrap(theirs["set"]?.objectValue) {
                XCTAssertEqual(try list.status(at: Int(index)!).rawValue, UInt8(value.intValue!), "bits \(bits) index \(index)")
            }
        }
    }

    private static let script = #"""
import sys, json, zlib, base64
try:
    from token_status_list import BitArray
except ImportError:
    BitArray = None

def b64d(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
def get(bits, lst, index):
    if BitArray is not None:
        return BitArray.from_b64(bits, lst).get(index)
    raw = zlib.decompress(b64d(lst))
    return (raw[index * bits // 8] >> (index * bits % 8)) & ((1 << bits) - 1)

mismatches, theirs = [], []
for case in json.load(sys.stdin):
    for index, value in case["expected"].items():
        if get(case["bits"], case["lst"], int(index)) != value:
            mismatches.append([case["bits"], index])
    if BitArray is not None:
        arr = BitArray.with_at_least(case["bits"], 1000)
        chosen = {str(i): (i * 7) % (1 << case["bits"]) for i in range(0, 1000, 37)}
        for i, v in chosen.items(): arr.set(int(i), v)
        theirs.append({"bits": case["bits"], "lst": arr.to_b64(), "set": chosen})
    else:
        theirs.append({"bits": case["bits"], "lst": base64.urlsafe_b64encode(zlib.compress(bytes([0b00000110]) * 4, 9)).rstrip(b"=").decode(),
                       "set": {str(i): (0b00000110 >> (i * case["bits"] % 8)) & ((1 << case["bits"]) - 1) for i in range(0, 8 // case["bits"])}})
print(json.dumps({"mismatches": mismatches, "theirs": theirs, "package": BitArray is not None}))
"""#
}
