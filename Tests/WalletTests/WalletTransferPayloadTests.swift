import Cryptography
import JOSE
import JSON
import XCTest
@testable import Wallet

/// The CLI wallet's side of device transfer: the QR code's link and the sealed payload.
final class WalletTransferPayloadTests: XCTestCase {
    func testQRContentRoundTripsAndRefusesOtherLinks() throws {
        let key = try HolderKey()
        let content = TransferQRContent(provider: "http://127.0.0.1:8080/wallet-provider", sessionID: "1b4e28ba-2fa1-41d2-883f-0016d3cca427",
                                        publicKey: key.jwk)
        XCTAssertTrue(content.uri.hasPrefix("http://127.0.0.1:8080/wallet-provider/transfer#s=1b4e28ba-2fa1-41d2-883f-0016d3cca427&k=%7B"))
        XCTAssertEqual(try TransferQRContent.parse(content.uri), content)
        for bad in ["https://example.org/other#s=a&k={}", content.provider + "/transfer#s=abc", content.provider + "/transfer#k=%7B%7D&s=x",
                    "no fragment"] {
            XCTAssertThrowsError(try TransferQRContent.parse(bad), bad)
        }
    }

    func testPayloadOpensOnlyWithTheDestinationsKey() throws {
        let destination = try HolderKey()
        let credentials: [JSONValue] = [["format": "dc+sd-jwt", "credential": "eyJ...~"]]
        let sealed = try WalletTransferPayload.seal(credentials: credentials, to: destination.jwk)
        let jwe = try JWE.parse(sealed)
        XCTAssertEqual(jwe.algorithm, "ECDH-ES")
        XCTAssertEqual(jwe.encryption, "A256GCM")
        XCTAssertEqual(try WalletTransferPayload.open(sealed, with: destination), credentials)
        XCTAssertThrowsError(try WalletTransferPayload.open(sealed, with: try HolderKey()))
    }
}
