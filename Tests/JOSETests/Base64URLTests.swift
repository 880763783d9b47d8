import Support
import JOSE
import XCTest

final class Base64URLTests: XCTestCase {
    /// RFC 4648 §10 vectors, in the URL alphabet without padding.
    func testRFC4648Vectors() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64URL.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64URL.decode(encoded), Array(plain.utf8))
        }
    }

    func testURLAlphabet() {
        XCTAssertEqual(Base64URL.encode([0xFB, 0xFF, 0xBF]), "-_-_")
        XCTAssertEqual(Base64URL.decode("-_-_"), [0xFB, 0xFF, 0xBF])
        XCTAssertNil(Base64URL.decode("+/+/"))
    }

    func testRoundTripAllLengths() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let encoded = Base64URL.encode(bytes)
            XCTAssertFalse(encoded.contains("="))
            XCTAssertEqual(Base64URL.decode(encoded), bytes)
        }
    }

    func testStrictDecoding() {
        XCTAssertNil(Base64URL.decode("Zg=="), "padding")
        XCTAssertNil(Base64URL.decode("Zm8="), "padding")
        XCTAssertNil(Base64URL.decode("Zm9v\n"), "newline")
        XCTAssertNil(Base64URL.decode(" Zm9v"), "space")
        XCTAssertNil(Base64URL.decode("Zm 9v"), "inner space")
        XCTAssertNil(Base64URL.decode("Z"), "impossible length")
        XCTAssertNil(Base64URL.decode("Zm9vY"), "impossible length")
        XCTAssertNil(Base64URL.decode("Zm9v!"), "non-alphabet")
        XCTAssertNil(Base64URL.decode("Zé"), "non-ASCII")
        XCTAssertNil(Base64URL.decode("Zh"), "non-zero trailing bits")
        XCTAssertNil(Base64URL.decode("Zm9"), "non-zero trailing bits")
    }
}
