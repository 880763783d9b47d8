import XCTest
import CBOR
import Cryptography
@testable import COSE

final class COSESign1Tests: XCTestCase {
    static let payload = CBORValue.embedded(["docType": "eu.europa.ec.eudi.pid.1", "version": "1.0"]).encoded()

    func testSignAndVerifyEveryAlgorithmTaggedAndUntagged() throws {
        for algorithm in COSEAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm.signatureAlgorithm)
            let message = try COSESign1.sign(payload: Self.payload, key: key, algorithm: algorithm)
            XCTAssertEqual(message.protectedBytes, CBORValue.map([CBORMapEntry(1, CBORValue(algorithm.rawValue))]).encoded())
            for tagged in [true, false] {
                let bytes = message.encoded(tagged: tagged)
                XCTAssertEqual(bytes.first == 0xd2, tagged)
                let decoded = try COSESign1(decoding: bytes)
                XCTAssertEqual(decoded, message)
                XCTAssertNoThrow(try decoded.verify(key: key.publicKey, allowList: Set(COSEAlgorithm.allCases)), "\(algorithm)")
                XCTAssertEqual(try decoded.algorithm(), algorithm)
            }
        }
    }

    func testDetachedPayload() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let message = try COSESign1.sign(payload: Self.payload, key: key, algorithm: .es256, detached: true)
        XCTAssertNil(message.payload)
        let decoded = try COSESign1(decoding: message.encoded(tagged: true))
        XCTAssertEqual(decoded.cborValue(tagged: false).arrayValue?[2], .null)
        XCTAssertNoThrow(try decoded.verify(key: key.publicKey, allowList: [.es256], detachedPayload: Self.payload))
        assertCOSEError(.payloadMismatch("detached payload not supplied"), try decoded.verify(key: key.publicKey, allowList: [.es256]))
        assertCOSEError(.invalidSignature, try decoded.verify(key: key.publicKey, allowList: [.es256], detachedPayload: [1]))
        let attached = try COSESign1.sign(payload: Self.payload, key: key, algorithm: .es256)
        assertCOSEError(.payloadMismatch("payload is attached; a detached one was also supplied"),
                        try attached.verify(key: key.publicKey, allowList: [.es256], detachedPayload: Self.payload))
    }

    func testTamperedPayloadHeaderOrSignatureIsRejected() throws {
        let key = try PrivateKey(generatingFor: .ES384)
        let message = try COSESign1.sign(payload: Self.payload, key: key, algorithm: .es384,
                                         protectedHeader: [CBORMapEntry(COSEHeaderLabel.contentType, "application/mso")])
        var items = try XCTUnwrap(message.cborValue(tagged: false).arrayValue)

        var payload = Self.payload
        payload[payload.count - 1] ^= 1
        var tampered = items
        tampered[2] = .bytes(payload)
        assertCOSEError(.invalidSignature, try COSESign1(.array(tampered)).verify(key: key.publicKey, allowList: [.es384]))

        // Same header map, different protected bytes (content type changed).
        tampered = items
        tampered[0] = .bytes(CBORValue.map([CBORMapEntry(1, -35), CBORMapEntry(3, "application/cbor")]).encoded())
        assertCOSEError(.invalidSignature, try COSESign1(.array(tampered)).verify(key: key.publicKey, allowList: [.es384]))

        var signature = message.signature
        signature[0] ^= 0x80
        items[3] = .bytes(signature)
        assertCOSEError(.invalidSignature, try COSESign1(.array(items)).verify(key: key.publicKey, allowList: [.es384]))

        // A truncated or DER-shaped signature is just invalid, never a crash.
        items[3] = .bytes(Array(message.signature.dropLast()))
        assertCOSEError(.invalidSignature, try COSESign1(.array(items)).verify(key: key.publicKey, allowList: [.es384]))

        // The unprotected header is not signed: changing it does not matter to the signature.
        var unprotected = try XCTUnwrap(message.cborValue(tagged: false).arrayValue)
        unprotected[1] = [4: .bytes([1])]
        XCTAssertNoThrow(try COSESign1(.array(unprotected)).verify(key: key.publicKey, allowList: [.es384]))
    }

    func testAlgorithmAllowListAndKeyFit() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let message = try COSESign1.sign(payload: Self.payload, key: key, algorithm: .es256)
        assertCOSEError(.unsupportedAlgorithm("-7"), try message.verify(key: key.publicKey, allowList: [.es384, .edDSA]))
        let other = try PrivateKey(generatingFor: .ES384)
        assertCOSEError(.keyAlgorithmMismatch, try message.verify(key: other.publicKey, allowList: [.es256]))
        let ed = try PrivateKey(generatingFor: .EdDSA)
        assertCOSEError(.keyAlgorithmMismatch, try message.verify(key: ed.publicKey, allowList: [.es256]))
        let stranger = try PrivateKey(generatingFor: .ES256)
        assertCOSEError(.invalidSignature, try message.verify(key: stranger.publicKey, allowList: [.es256]))
        XCTAssertThrowsError(try COSESign1.sign(payload: [], key: key, algorithm: .es512)) {
            XCTAssertEqual($0 as? COSEError, .keyAlgorithmMismatch)
        }
    }

    func testUnknownOrMissingAlgorithm() throws {
        let signature = [UInt8](repeating: 0, count: 64)
        for (header, expected) in [
            (CBORValue.map([CBORMapEntry(1, -257)]), COSEError.unsupportedAlgorithm("-257")),
            (.map([CBORMapEntry(1, "ES256")]), .unsupportedAlgorithm("\"ES256\"")),
            (.map([CBORMapEntry(3, 0)]), .unsupportedAlgorithm("(missing alg)")),
        ] {
            let message = try COSESign1(.array([.bytes(header.encoded()), [:], .bytes([1]), .bytes(signature)]))
            let key = try PrivateKey(generatingFor: .ES256)
            assertCOSEError(expected, try message.verify(key: key.publicKey, allowList: Set(COSEAlgorithm.allCases)))
        }
    }

    func testCriticalHeaders() throws {
        let key = try PrivateKey(generatingFor: .EdDSA)
        let understood = try COSESign1.sign(payload: [1], key: key, algorithm: .edDSA, protectedHeader: [
            CBORMapEntry(COSEHeaderLabel.critical, [3]), CBORMapEntry(COSEHeaderLabel.contentType, 60),
        ])
        XCTAssertNoThrow(try understood.verify(key: key.publicKey, allowList: [.edDSA]))

        let unknown = try COSESign1.sign(payload: [1], key: key, algorithm: .edDSA, protectedHeader: [
            CBORMapEntry(COSEHeaderLabel.critical, [-70000]), CBORMapEntry(-70000, true),
        ])
        assertCOSEError(.unsupportedCritical("-70000"), try unknown.verify(key: key.publicKey, allowList: [.edDSA]))
        XCTAssertNoThrow(try unknown.verify(key: key.publicKey, allowList: [.edDSA], understoodCritical: [-70000]))

        let absent = try COSESign1.sign(payload: [1], key: key, algorithm: .edDSA, protectedHeader: [
            CBORMapEntry(COSEHeaderLabel.critical, [3]),
        ])
        assertCOSEError(.malformed("crit lists 3, which is not in the protected header"),
                        try absent.verify(key: key.publicKey, allowList: [.edDSA]))
    }

    func testX5Chain() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let leaf: [UInt8] = [0x30, 0x01, 0xaa], ca: [UInt8] = [0x30, 0x01, 0xbb]
        let one = try COSESign1.sign(payload: [1], key: key, algorithm: .es256, x5chain: [leaf])
        // RFC 9360 §2: a single certificate is a bare bstr; more are an array; unprotected (18013-5).
        XCTAssertEqual(one.unprotectedHeader, [CBORMapEntry(33, .bytes(leaf))])
        XCTAssertEqual(try COSESign1(decoding: one.encoded(tagged: false)).x5chain(), [leaf])
        let two = try COSESign1.sign(payload: [1], key: key, algorithm: .es256, x5chain: [leaf, ca])
        XCTAssertEqual(two.unprotectedHeader, [CBORMapEntry(33, [.bytes(leaf), .bytes(ca)])])
        XCTAssertEqual(try COSESign1(decoding: two.encoded(tagged: true)).x5chain(), [leaf, ca])
        XCTAssertEqual(try COSESign1.sign(payload: [1], key: key, algorithm: .es256).x5chain(), [])

        let bad = try COSESign1(.array([.bytes(one.protectedBytes), [33: ["x"]], .bytes([1]), .bytes(one.signature)]))
        assertCOSEError(.malformed("x5chain must be a bstr or an array of bstr"), try bad.x5chain())
    }

    func testMalformedStructuresAreRefused() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let good = try COSESign1.sign(payload: [1], key: key, algorithm: .es256)
        let p = CBORValue.bytes(good.protectedBytes), s = CBORValue.bytes(good.signature)
        let cases: [(CBORValue, String)] = [
            (.tagged(17, [p, [:], .bytes([1]), s]), "tag 17 is not COSE_Sign1 (18)"),
            ([p, [:], .bytes([1])], "COSE_Sign1 must be an array of 4"),
            ([.map([]), [:], .bytes([1]), s], "protected header must be a byte string"),
            ([.bytes([0x80]), [:], .bytes([1]), s], "protected header must be a map"),
            ([.bytes([0xa1, 0x01]), [:], .bytes([1]), s], "protected header: length beyond the input at offset 0"),
            ([p, [], .bytes([1]), s], "unprotected header must be a map"),
            ([p, [:], "x", s], "payload must be a byte string or nil"),
            ([p, [:], .bytes([1]), "x"], "signature must be a byte string"),
            ([p, [1: -7], .bytes([1]), s], "header parameter 1 in both buckets"),
            ([p, [1.5: 0], .bytes([1]), s], "header label must be an integer or text"),
        ]
        for (value, reason) in cases {
            XCTAssertThrowsError(try COSESign1(value), reason) {
                XCTAssertEqual($0 as? COSEError, .malformed(reason))
            }
        }
        // A zero-length protected bstr and an encoded empty map are both an empty header (RFC 9052 §3).
        XCTAssertEqual(try COSESign1(.array([.bytes([]), [:], .bytes([1]), s])).protectedHeader, [])
        XCTAssertEqual(try COSESign1(.array([.bytes([0xa0]), [:], .bytes([1]), s])).protectedHeader, [])
        XCTAssertThrowsError(try COSESign1(decoding: [0x84, 0x40])) {
            XCTAssertEqual($0 as? COSEError, .malformed("length beyond the input at offset 0"))
        }
    }
}
