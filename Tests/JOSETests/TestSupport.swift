import Support
import Cryptography
import JOSE
import JSON
import XCTest

func jwk(_ text: String) throws -> JWK {
    try JWK(json: XCTUnwrap(JSONValue.parse(text).objectValue))
}

/// Asserts that `body` throws exactly `expected`.
func assertJOSEError<T>(
    _ expected: JOSEError, _ body: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
        XCTAssertEqual(error as? JOSEError, expected, file: file, line: line)
    }
}

/// Builds compact tokens by hand, for headers and algorithms `JWS.sign` would never produce.
enum TokenForge {
    static func compact(header: JSONValue, payload: JSONValue = ["iss": "https://example.com"], signature: [UInt8] = [1, 2, 3]) -> String {
        Base64URL.encode(header.bytes) + "." + Base64URL.encode(payload.bytes) + "." + Base64URL.encode(signature)
    }

    /// A correctly signed token under an arbitrary header (alg is forced to `algorithm`).
    static func signed(_ header: [String: JSONValue], key: PrivateKey, algorithm: SignatureAlgorithm,
                       payload: JSONValue = ["iss": "https://example.com"]) throws -> String {
        try JWS.sign(header: header, payloadBytes: payload.bytes, key: key, algorithm: algorithm)
    }
}
