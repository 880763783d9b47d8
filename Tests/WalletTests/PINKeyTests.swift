import JSON
@testable import Wallet
import XCTest

/// The PIN key's KDF (issue 21) must give the key docs/wallet-provider.md describes, which a
/// wallet written elsewhere derives too: the vector below comes from Python's `cryptography`
/// (HKDF-SHA256, then `ec.derive_private_key`), as Tests/interop/nlwallet.py does it.
final class PINKeyTests: XCTestCase {
    func testMatchesTheIndependentDerivation() throws {
        let key = try PINKey.derive(pin: "123456", salt: Array(0 ..< 16))
        XCTAssertEqual(key.jwk["x"], .string("-f9kD2M2eXu-FvZcvDU6Mb6LfCDIuJP8SpMoQ1eLuQs"))
        XCTAssertEqual(key.jwk["y"], .string("I6Pno-RVHxn4KBMEBhX1gLeWIR75NR4ABXON5cHB_Ps"))
    }

    func testSaltAndPINEachChangeTheKey() throws {
        let salt = PINKey.newSalt()
        let key = try PINKey.derive(pin: "123456", salt: salt)
        XCTAssertEqual(try PINKey.derive(pin: "123456", salt: salt).jwk, key.jwk)
        XCTAssertNotEqual(try PINKey.derive(pin: "123457", salt: salt).jwk, key.jwk)
        XCTAssertNotEqual(try PINKey.derive(pin: "123456", salt: PINKey.newSalt()).jwk, key.jwk)
        XCTAssertThrowsError(try PINKey.derive(pin: "", salt: salt))
    }
}
