import JSON
import SDJWT
@testable import WalletBench
import XCTest

/// `--flow pin-recovery`'s presentation of a PID's recovery code (RecoveryFlows.swift).
final class RecoveryFlowTests: XCTestCase {
    func testPresentsOnlyTheTopLevelRecoveryCodeDisclosure() throws {
        let code = Disclosure(name: "recovery_code", value: "ab12")
        let others = [Disclosure(name: "given_name", value: "Erika"), Disclosure(name: "note", value: "has \"recovery_code\" inside"),
                      Disclosure(name: nil, value: "recovery_code")]
        let credential = "eyJhbGciOiJFUzI1NiJ9.e30.c2ln~" + (others + [code] + others).map(\.encoded).joined(separator: "~") + "~"
        XCTAssertEqual(try PINRecoveryWorker.recoveryCodePresentation(credential), "eyJhbGciOiJFUzI1NiJ9.e30.c2ln~\(code.encoded)~")
        XCTAssertThrowsError(try PINRecoveryWorker.recoveryCodePresentation("eyJhbGciOiJFUzI1NiJ9.e30.c2ln~"
            + others.map(\.encoded).joined(separator: "~") + "~"))
    }
}
