import XCTest
import CBOR
import Cryptography
@testable import COSE

/// Vectors from the COSE working group's examples (github.com/cose-wg/Examples, sign1-tests/),
/// the ones RFC 9052 Appendix C.2.1 is drawn from: key "11" on P-256, payload
/// "This is the content.". ECDSA signatures are randomized, so only verification is checked.
final class COSEExampleTests: XCTestCase {
    static let x = hex("bac5b11cad8f99f9c72b05cf4b9e26d244dc189f745228255a219a86d6a09eff")
    static let y = hex("20138bf82dc1b6d562be0fa54ab7804a3a64b6d72ccfed6b6fb6ed28bbfc117e")
    static let content = Array("This is the content.".utf8)

    /// sign-pass-03 ("Remove CBOR Tag"): untagged COSE_Sign1, alg ES256 protected, kid "11".
    static let pass03 = "8443A10126A10442313154546869732069732074686520636F6E74656E742E5840EAE868ECC176883766C5DC5BA5B8DCA25DAB3C2E56A551CE5705B793914348E19F43D6C6BA654472DA301B645B293C9BA939295B97C4BDB847782BFF384C5794"
    /// sign-pass-02 ("External"): external_aad 11aa22bb33cc44dd55006699.
    static let pass02 = "D28443A10126A10442313154546869732069732074686520636F6E74656E742E5840EAE868ECC176883766C5DC5BA5B8DCA25DAB3C2E56A551CE5705B793914348E155388B10C4F1B59A6733EAB416870A945111A4B2FBDBEF33A77234B1DEFF2F9B"
    /// sign-fail-02 ("Change signature"): the payload's last byte changed after signing.
    static let fail02 = "D28443A10126A10442313154546869732069732074686520636F6E74656E742F5840EAE868ECC176883766C5DC5BA5B8DCA25DAB3C2E56A551CE5705B793914348E19F43D6C6BA654472DA301B645B293C9BA939295B97C4BDB847782BFF384C5794"
    /// sign-pass-01 ("Redo protected"): protected is h'A0' (an empty map) and alg is unprotected.
    static let pass01 = "D28441A0A201260442313154546869732069732074686520636F6E74656E742E5840EAE868ECC176883766C5DC5BA5B8DCA25DAB3C2E56A551CE5705B793914348E11A02E5F0344BF2D4EE5C7FD75A68A9F5E0B3CC1F1FC1409C189566586FF9D610"

    private func key() throws -> PublicKey { try PublicKey(components: .ec(curve: "P-256", x: Self.x, y: Self.y)) }

    func testUntaggedAndTaggedExampleVerifies() throws {
        let message = try COSESign1(decoding: hex(Self.pass03))
        XCTAssertEqual(message.payload, Self.content)
        XCTAssertEqual(message.header(COSEHeaderLabel.keyID), .bytes(Array("11".utf8)))
        XCTAssertNoThrow(try message.verify(key: key(), allowList: [.es256]))
        // The tag is not signed: the same message tagged (RFC 9052 C.2.1's form) verifies too.
        XCTAssertNoThrow(try COSESign1(decoding: [0xd2] + hex(Self.pass03)).verify(key: key(), allowList: [.es256]))
        XCTAssertEqual(message.encoded(tagged: false), hex(Self.pass03))
    }

    func testSigStructureMatchesTheExampleIntermediate() throws {
        let message = try COSESign1(decoding: hex(Self.pass03))
        XCTAssertEqual(COSESign1.signatureStructure(protectedBytes: message.protectedBytes, externalAAD: [], payload: Self.content),
                       hex("846A5369676E61747572653143A101264054546869732069732074686520636F6E74656E742E"))
    }

    func testExternalAADExampleVerifiesOnlyWithTheAAD() throws {
        let message = try COSESign1(decoding: hex(Self.pass02))
        XCTAssertNoThrow(try message.verify(key: key(), allowList: [.es256], externalAAD: hex("11aa22bb33cc44dd55006699")))
        assertCOSEError(.invalidSignature, try message.verify(key: key(), allowList: [.es256]))
    }

    func testChangedPayloadExampleFails() throws {
        let message = try COSESign1(decoding: hex(Self.fail02))
        assertCOSEError(.invalidSignature, try message.verify(key: key(), allowList: [.es256]))
    }

    func testUnprotectedAlgIsRefused() throws {
        // Valid per RFC 9052, but an unprotected alg can be swapped; mdoc requires it protected.
        let message = try COSESign1(decoding: hex(Self.pass01))
        XCTAssertEqual(message.protectedHeader, [])
        assertCOSEError(.malformed("alg must be in the protected header"), try message.verify(key: key(), allowList: [.es256]))
    }

    func testExampleKeyAsCOSEKey() throws {
        let coseKey = try COSEKey(publicKey: key())
        XCTAssertEqual(coseKey.encoded(), [0xa4, 0x01, 0x02, 0x20, 0x01, 0x21, 0x58, 0x20] + Self.x + [0x22, 0x58, 0x20] + Self.y)
        XCTAssertEqual(try COSEKey(decoding: coseKey.encoded()), coseKey)
    }
}

func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = s.utf8.makeIterator()
    func nibble(_ c: UInt8) -> UInt8 { c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10 }
    while let a = it.next(), let b = it.next() { out.append(nibble(a) << 4 | nibble(b)) }
    return out
}

func assertCOSEError<T>(_ expected: COSEError, _ body: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
        XCTAssertEqual(error as? COSEError, expected, file: file, line: line)
    }
}
