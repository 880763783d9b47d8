import WalletProvider
import XCTest

/// The exact bytes of the registration binding (docs/wallet-provider.md shows the same
/// example): member order nonce, hardware_key_tag, jwk_thumbprint; compact; `/`, `+`, `=`
/// unescaped, as Python's `json.dumps(obj, separators=(",", ":"))` writes them.
final class ClientDataHashTests: XCTestCase {
    let nonce = "AAAAAGtJH4BvT0xmX3Rlc3Rub25jZQ"
    let tag = "ios/key+1="
    let thumbprint = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"

    func testClientDataBytes() {
        XCTAssertEqual(
            String(decoding: ClientDataHash.clientData(nonce: nonce, hardwareKeyTag: tag, jwkThumbprint: thumbprint), as: UTF8.self),
            #"{"nonce":"AAAAAGtJH4BvT0xmX3Rlc3Rub25jZQ","hardware_key_tag":"ios/key+1=","jwk_thumbprint":"NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"}"#)
    }

    func testHash() {
        XCTAssertEqual(ClientDataHash.encoded(nonce: nonce, hardwareKeyTag: tag, jwkThumbprint: thumbprint),
                       "o6MI6tDy7t_03XJM0tJgVzO0m-uCv2QFqc6VGUyo_gc")
        XCTAssertEqual(ClientDataHash.digest(nonce: nonce, hardwareKeyTag: tag, jwkThumbprint: thumbprint).count, 32)
    }
}
