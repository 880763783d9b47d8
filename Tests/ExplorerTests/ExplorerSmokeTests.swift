import Explorer
import XCTest

final class ExplorerSmokeTests: XCTestCase {
    func testModuleLinks() { XCTAssertNotNil(Explorer.self) }
}
