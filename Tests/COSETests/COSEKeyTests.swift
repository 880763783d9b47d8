import XCTest
import CBOR
import Cryptography
@testable import COSE

final class COSEKeyTests: XCTestCase {
    func testRoundTripForEveryCurve() throws {
        let expected: [(SignatureAlgorithm, Int64, Int64, Int)] = [(.ES256, 2, 1, 32), (.ES384, 2, 2, 48), (.ES512, 2, 3, 66), (.EdDSA, 1, 6, 32)]
        for (algorithm, kty, crv, size) in expected {
            let key = try PrivateKey(generatingFor: algorithm)
            let coseKey = try COSEKey(publicKey: key.publicKey)
            let value = try CBORValue.decode(coseKey.encoded())
            XCTAssertEqual(value[1], CBORValue(kty), "\(algorithm)")
            XCTAssertEqual(value[-1], CBORValue(crv), "\(algorithm)")
            XCTAssertEqual(value[-2]?.bytesValue?.count, size)
            XCTAssertEqual(value[-3]?.bytesValue?.count, kty == 2 ? size : nil)
            let decoded = try COSEKey(decoding: coseKey.encoded())
            XCTAssertEqual(decoded, coseKey)
            XCTAssertEqual(try decoded.publicKey(), key.publicKey)
            // A signature made with the private key verifies under the key rebuilt from COSE_Key.
            let cose = try XCTUnwrap(COSEAlgorithm(algorithm))
            XCTAssertNoThrow(try COSESign1.sign(payload: [7], key: key, algorithm: cose)
                .verify(key: decoded.publicKey(), allowList: [cose]))
        }
    }

    func testKeyIDAndAlgorithmAreCarried() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let coseKey = try COSEKey(publicKey: key.publicKey, keyID: [1, 2], algorithm: .es256)
        let value = try CBORValue.decode(coseKey.encoded())
        XCTAssertEqual(value[2], .bytes([1, 2]))
        XCTAssertEqual(value[3], -7)
        XCTAssertEqual(try COSEKey(value), coseKey)
    }

    func testInvalidKeysAreRefused() throws {
        let key = try COSEKey(publicKey: PrivateKey(generatingFor: .ES256).publicKey)
        guard case .ec(_, let x, let y) = key.components else { return XCTFail() }
        let cases: [(CBORValue, String)] = [
            ([1: 2, -1: 1, -2: .bytes(x), -3: .bytes(y), -4: .bytes(x)], "private key parameter d in a public COSE_Key"),
            ([-1: 1, -2: .bytes(x), -3: .bytes(y)], "missing or non-integer kty"),
            ([1: 3, -1: 1, -2: .bytes(x), -3: .bytes(y)], "unsupported kty 3"),
            ([1: 2, -1: 4, -2: .bytes(x)], "missing or unsupported crv"),
            ([1: 2, -1: 6, -2: .bytes(x), -3: .bytes(y)], "crv 6 is not an EC2 curve"),
            ([1: 1, -1: 1, -2: .bytes(x)], "crv 1 is not an OKP signing curve"),
            ([1: 2, -1: 1, -2: .bytes(x), -3: true], "y must be a byte string"),
            ([1: 2, -1: 1, -2: .bytes(Array(x.dropFirst())), -3: .bytes(y)], "EC2 coordinates must be 32 bytes"),
            ([1: 2, -1: 2, -2: .bytes(x), -3: .bytes(y)], "EC2 coordinates must be 48 bytes"),
            ([1: 2, -1: 1, -2: "x", -3: .bytes(y)], "x must be a byte string"),
            ([1: 2, -1: 1, -2: .bytes(x), -3: .bytes(y), 2: "kid"], "kid must be a byte string"),
            ([1: 2, -1: 1, -2: .bytes(x), -3: .bytes(y), 3: -257], "unsupported alg -257"),
            ([1, 2], "COSE_Key must be a map"),
        ]
        for (value, reason) in cases {
            XCTAssertThrowsError(try COSEKey(value), reason) { XCTAssertEqual($0 as? COSEError, .invalidKey(reason)) }
        }
        // Well-formed but off the curve: caught when the OpenSSL key is built.
        var offCurve = y
        offCurve[31] ^= 1
        let bad = try COSEKey([1: 2, -1: 1, -2: .bytes(x), -3: .bytes(offCurve)])
        XCTAssertThrowsError(try bad.publicKey()) {
            guard case .invalidKey = $0 as? COSEError else { return XCTFail("\($0)") }
        }
    }

    func testRSAKeysHaveNoCOSEKeyForm() throws {
        let rsa = try PrivateKey(generatingFor: .RS256)
        XCTAssertThrowsError(try COSEKey(publicKey: rsa.publicKey)) {
            XCTAssertEqual($0 as? COSEError, .invalidKey("RSA keys are not supported as COSE_Key"))
        }
    }
}
