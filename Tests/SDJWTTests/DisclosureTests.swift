import JSON
import SDJWT
import Support
import XCTest

final class DisclosureTests: XCTestCase {
    /// RFC 9901 §4.2.1 and §4.2.2: the published disclosures and their SHA-256 digests. The
    /// RFC's serialization has spaces after commas, which is why the encoded string is kept.
    func testRFC9901DisclosureDigests() throws {
        let member = try Disclosure(encoded: "WyJfMjZiYzRMVC1hYzZxMktJNmNCVzVlcyIsICJmYW1pbHlfbmFtZSIsICJNw7ZiaXVzIl0")
        XCTAssertEqual(member.salt, "_26bc4LT-ac6q2KI6cBW5es")
        XCTAssertEqual(member.name, "family_name")
        XCTAssertEqual(member.value, "Möbius")
        XCTAssertEqual(member.digest(), "X9yH0Ajrdm1Oij4tWso9UzzKJvPoDxwmuEcO3XAdRC0")

        let element = try Disclosure(encoded: "WyJsa2x4RjVqTVlsR1RQVW92TU5JdkNBIiwgIkZSIl0")
        XCTAssertEqual(element.salt, "lklxF5jMYlGTPUovMNIvCA")
        XCTAssertNil(element.name)
        XCTAssertEqual(element.value, "FR")
        XCTAssertEqual(element.digest(), "w0I8EKcdCtUPkGCNUrfwVp2xEgNjtoIDlOxc9-PlOhs")
    }

    func testNewDisclosuresSerializeCompactly() throws {
        let disclosure = Disclosure(salt: "_26bc4LT-ac6q2KI6cBW5es", name: "family_name", value: "Möbius")
        XCTAssertEqual(String(decoding: Base64URL.decode(disclosure.encoded)!, as: UTF8.self),
                       #"["_26bc4LT-ac6q2KI6cBW5es","family_name","Möbius"]"#)
        XCTAssertEqual(try Disclosure(encoded: disclosure.encoded), disclosure)
        let element = Disclosure(salt: "s", name: nil, value: ["a": 1])
        XCTAssertEqual(String(decoding: Base64URL.decode(element.encoded)!, as: UTF8.self), #"["s",{"a":1}]"#)
    }

    func testSaltsAreRandom128Bit() {
        let salts = Set((0..<50).map { _ in Disclosure.randomSalt() })
        XCTAssertEqual(salts.count, 50)
        XCTAssertTrue(salts.allSatisfy { Base64URL.decode($0)?.count == 16 })
        XCTAssertNotEqual(Disclosure.decoyDigest(), Disclosure.decoyDigest())
        XCTAssertEqual(Base64URL.decode(Disclosure.decoyDigest())?.count, 32)
    }

    func testMalformedDisclosuresRejected() {
        let cases: [String: String] = [
            "not base64": "!!",
            "not JSON": Base64URL.encode(Array("nope".utf8)),
            "object": Base64URL.encode(Array(#"{"a":1}"#.utf8)),
            "one element": Base64URL.encode(Array(#"["salt"]"#.utf8)),
            "four elements": Base64URL.encode(Array(#"["s","n","v","x"]"#.utf8)),
            "salt not string": Base64URL.encode(Array(#"[1,"n","v"]"#.utf8)),
            "name not string": Base64URL.encode(Array(#"["s",2,"v"]"#.utf8)),
        ]
        for (label, encoded) in cases {
            XCTAssertThrowsError(try Disclosure(encoded: encoded), label) { error in
                guard case .malformedDisclosure? = error as? SDJWTError else { return XCTFail("\(label): \(error)") }
            }
        }
    }

    func testDigestAlgorithmsByName() {
        XCTAssertEqual(DigestAlgorithm(rawValue: "sha-256"), .sha256)
        XCTAssertEqual(Base64URL.decode(DigestAlgorithm.sha384.digest(of: "x"))?.count, 48)
        XCTAssertEqual(Base64URL.decode(DigestAlgorithm.sha512.digest(of: "x"))?.count, 64)
    }
}
