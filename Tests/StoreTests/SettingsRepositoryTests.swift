import Store
import XCTest

final class SettingsRepositoryTests: XCTestCase {
    func testGetSetAndIncrement() throws {
        let settings = SettingsRepository(database: try Database(path: ":memory:"))
        XCTAssertNil(try settings.get("missing"))
        try settings.set("name", "a")
        try settings.set("name", "b")
        XCTAssertEqual(try settings.get("name"), "b")

        XCTAssertEqual(try settings.increment("changes"), 1)
        XCTAssertEqual(try settings.increment("changes"), 2)
        XCTAssertEqual(try settings.get("changes"), "2")
        try settings.set("changes", "41")
        XCTAssertEqual(try settings.increment("changes"), 42)
    }

    func testIncrementRefusesANonInteger() throws {
        let settings = SettingsRepository(database: try Database(path: ":memory:"))
        try settings.set("changes", "many")
        XCTAssertThrowsError(try settings.increment("changes")) { error in
            guard case StoreError.constraint = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertEqual(try settings.get("changes"), "many")
    }
}
