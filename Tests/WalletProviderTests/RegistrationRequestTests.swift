import JSON
import WalletProvider
import XCTest

final class RegistrationRequestTests: XCTestCase {
    private func code(_ json: String) -> String? {
        guard let value = try? JSONValue.parse(Array(json.utf8)) else { return "unparseable" }
        do throws(WalletProviderError) {
            _ = try RegistrationRequest.parse(value)
            return nil
        } catch {
            return error.codeValue.rawValue
        }
    }

    func testShapes() throws {
        let dev = try RegistrationRequest.parse(["challenge": "n", "key_attestation": "a.b.c", "hardware_key_tag": "t"])
        XCTAssertEqual(dev.format, .dev)
        XCTAssertEqual(dev.nonce, "n")
        let android = try RegistrationRequest.parse(["nonce": "n", "key_attestation": ["MIIB", "MIIC"], "hardware_key_tag": "t"])
        XCTAssertEqual(android.format, .android)
        let apple = try RegistrationRequest.parse(["nonce": "n", "key_attestation": "o2NmbXQ", "hardware_key_tag": "t"])
        XCTAssertEqual(apple.format, .apple)
    }

    func testEveryMalformedBodyIsBadRequest() {
        for bad in ["[]", "\"x\"", "{}", #"{"key_attestation": "a.b.c", "hardware_key_tag": "t"}"#,
                    #"{"nonce": 5, "key_attestation": "a.b.c", "hardware_key_tag": "t"}"#,
                    #"{"nonce": "", "key_attestation": "a.b.c", "hardware_key_tag": "t"}"#,
                    #"{"nonce": "n", "challenge": "m", "key_attestation": "a.b.c", "hardware_key_tag": "t"}"#,
                    #"{"nonce": "n", "hardware_key_tag": "t"}"#,
                    #"{"nonce": "n", "key_attestation": 7, "hardware_key_tag": "t"}"#,
                    #"{"nonce": "n", "key_attestation": "", "hardware_key_tag": "t"}"#,
                    #"{"nonce": "n", "key_attestation": [1, 2], "hardware_key_tag": "t"}"#,
                    #"{"nonce": "n", "key_attestation": "a.b.c"}"#,
                    #"{"nonce": "n", "key_attestation": "a.b.c", "hardware_key_tag": ""}"#,
                    #"{"nonce": "n", "key_attestation": "a.b.c", "hardware_key_tag": "a\"b"}"#,
                    #"{"nonce": "n", "key_attestation": "a.b.c", "hardware_key_tag": "é"}"#,
                    #"{"nonce": "n", "key_attestation": "a.b.c", "hardware_key_tag": 3}"#] {
            XCTAssertEqual(code(bad), "bad_request", bad)
        }
        XCTAssertEqual(code(#"{"nonce": "n", "key_attestation": "a.b.c", "hardware_key_tag": "\#(String(repeating: "x", count: 257))"}"#),
                       "bad_request")
        XCTAssertNil(code(#"{"nonce": "n", "key_attestation": "a.b.c", "hardware_key_tag": "\#(String(repeating: "x", count: 256))"}"#))
    }
}
