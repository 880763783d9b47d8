import JSON
import Wallet
import XCTest

/// The CLI wallet's recovery-code check before PIN recovery and renewal (RecoveryCodes).
final class RecoveryCodesTests: XCTestCase {
    func testPreviewedCodesInBothForms() {
        let own: [String: JSONValue] = ["credential_previews": [
            ["credential_configuration_id": "urn:eudi:pid:1", "format": "dc+sd-jwt", "claims": ["recovery_code": "ab", "given_name": "E"]],
            ["credential_configuration_id": "eu.europa.ec.eudi.pid.1", "format": "mso_mdoc",
             "claims": ["eu.europa.ec.eudi.pid.nl.1": ["recovery_code": "ab"]]],
        ]]
        XCTAssertEqual(RecoveryCodes.previewed(inTokenResponse: own), ["ab"])
        let nl: [String: JSONValue] = ["credential_previews": [
            ["config_id": "urn:eudi:pid:1", "format": "dc+sd-jwt", "batch_size": 1,
             "credential_payload": ["vct": "urn:eudi:pid:1", "recovery_code": "cd"], "issuer_certificate": "AA=="],
        ]]
        XCTAssertEqual(RecoveryCodes.previewed(inTokenResponse: nl), ["cd"])
        XCTAssertEqual(RecoveryCodes.previewed(inTokenResponse: ["access_token": "t"]), [])
    }

    func testComparison() {
        var wallet = TestWalletFile(path: "/nonexistent")
        XCTAssertNil(RecoveryCodes.stored(in: wallet))
        wallet.credentials = [["format": "dc+sd-jwt", "claims": ["recovery_code": "old"]],
                              ["format": "dc+sd-jwt", "claims": ["recovery_code": "ab"]]]
        XCTAssertEqual(RecoveryCodes.stored(in: wallet), "ab", "the newest credential's code")
        XCTAssertTrue(RecoveryCodes.compare(previewed: ["ab"], stored: "ab").matches)
        let mismatch = RecoveryCodes.compare(previewed: ["cd"], stored: "ab")
        XCTAssertFalse(mismatch.matches)
        XCTAssertTrue(mismatch.report.contains("MISMATCH"))
        XCTAssertFalse(mismatch.report.contains("ab"), "the report never shows a code")
        XCTAssertFalse(RecoveryCodes.compare(previewed: [], stored: "ab").matches)
        XCTAssertFalse(RecoveryCodes.compare(previewed: ["a", "b"], stored: "a").matches)
        XCTAssertTrue(RecoveryCodes.compare(previewed: ["ab"], stored: nil).matches)
    }
}
