import Foundation
import HTTP
import JSON
import XCTest

/// RFC 6749 §5.2: `error_description` holds only %x20-21 / %x23-5B / %x5D-7E. Descriptions
/// quote client input, so every rendered error is limited to those characters.
final class ErrorDescriptionTests: XCTestCase {
    private func isAllowed(_ text: String) -> Bool { text.utf8.allSatisfy(ErrorDescription.isAllowed) }

    func testDisallowedCharactersAreReplaced() {
        XCTAssertEqual(ErrorDescription.sanitized("plain text, fine: ok!"), "plain text, fine: ok!")
        XCTAssertEqual(ErrorDescription.sanitized(#"unknown member "a\"b""#), "unknown member 'a/'b'")
        XCTAssertEqual(ErrorDescription.sanitized("C:\\path"), "C:/path")
        XCTAssertEqual(ErrorDescription.sanitized("line one\nline two\r\tend\u{7F}"), "line one line two  end ")
        XCTAssertEqual(ErrorDescription.sanitized("Zoë 🙂 Ω"), "Zo? ? ?")
        XCTAssertEqual(ErrorDescription.sanitized("nul\u{0}byte"), "nul byte")
        for text in ["\"", "\\", "é", "\n", "\u{1F600}", "a\u{2028}b", "~ !#[]{}"] {
            XCTAssertTrue(isAllowed(ErrorDescription.sanitized(text)), text)
        }
        XCTAssertTrue(isAllowed("~ !#[]{}"))
    }

    func testRenderedErrorsAreSanitized() throws {
        let response = HTTPResponse.error(status: .badRequest, code: "invalid_request", description: "bad \"x\\y\"\nZoë")
        let description = try XCTUnwrap(JSONValue.parse(response.body)["error_description"]?.stringValue)
        XCTAssertEqual(description, "bad 'x/y' Zo?")

        struct Quoting: ErrorResponse {
            var status: HTTPStatus { .badRequest }
            var code: String { "invalid_request" }
            var errorDescription: String { "redirect_uri \"https://a.example/\u{1}\" é" }
        }
        let redirect = RedirectedError(Quoting(), target: "https://wallet.example/cb").response
        let location = try XCTUnwrap(redirect.headers.first { $0.name == "Location" }?.value)
        let query = try XCTUnwrap(location.split(separator: "?").last)
        let pairs = Dictionary(uniqueKeysWithValues: query.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            return (parts[0], (parts.count > 1 ? parts[1] : "").replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "")
        })
        XCTAssertEqual(pairs["error_description"], "redirect_uri 'https://a.example/ ' ?")
    }
}
