import Pages
import XCTest

/// The guard the open pages share (moved here from the offer pages for `<wp>/instances`); the
/// PID Provider's cases are in IssuanceTests.OfferPageAccessTests.
final class OpenPageAccessTests: XCTestCase {
    private let access = OpenPageAccess(baseURL: "http://127.0.0.1:8080/wallet-provider")

    func testHostMustNameThisMachineOnTheBasePort() {
        XCTAssertNil(access.refusal(PageRequestSource(host: "127.0.0.1:8080"), action: "revoke wallet instances"))
        XCTAssertNil(access.refusal(PageRequestSource(host: "localhost:8080"), action: "revoke wallet instances"))
        XCTAssertNotNil(access.refusal(PageRequestSource(host: "evil.example:8080"), action: "revoke wallet instances"))
        XCTAssertNotNil(access.refusal(PageRequestSource(host: "127.0.0.1:9090"), action: "revoke wallet instances"))
    }

    func testCrossSitePostIsRefusedWithTheAction() {
        let refusal = access.refusal(PageRequestSource(host: "127.0.0.1:8080", origin: "http://evil.example", isPost: true),
                                     action: "revoke wallet instances")
        XCTAssertEqual(refusal, "a form post from http://evil.example cannot revoke wallet instances here")
        XCTAssertNil(access.refusal(PageRequestSource(host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080", isPost: true),
                                    action: "revoke wallet instances"))
        XCTAssertNil(access.refusal(PageRequestSource(host: "127.0.0.1:8080", origin: "null", fetchSite: "same-origin", isPost: true),
                                    action: "x"))
        XCTAssertNotNil(access.refusal(PageRequestSource(host: "127.0.0.1:8080", origin: "null", isPost: true), action: "x"))
    }
}
