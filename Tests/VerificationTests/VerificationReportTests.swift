import JSON
import Verification
import XCTest

final class VerificationReportTests: XCTestCase {
    func testAReportWithAFailedCheckIsRefusedAndHidesTheClaims() {
        var report = VerificationReport()
        report.pass("issuer_signature", "ES256")
        report.claims = .object(["given_name": .string("Erika")])
        XCTAssertTrue(report.verified)
        report.fail("nonce", "the key binding JWT's nonce is not this request's")
        XCTAssertFalse(report.verified)
        XCTAssertEqual(report.json["state"], .string("refused"))
        XCTAssertEqual(report.json["claims"], .object([:]))
    }

    func testAnEmptyReportIsNotVerified() {
        XCTAssertFalse(VerificationReport().verified)
    }
}
