import WalletProvider
import XCTest

final class WalletProviderSmokeTests: XCTestCase {
    func testModuleLinks() { XCTAssertNotNil(WalletProviderModule.self) }
}
