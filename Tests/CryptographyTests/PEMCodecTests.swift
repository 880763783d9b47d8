import Foundation
import XCTest
@testable import Cryptography

/// The PKCS#8 fast path of `PEMCodec`: PEM to DER on bytes, and decoders tried by key type.
final class PEMCodecTests: XCTestCase {
    /// The body decodes exactly as Foundation's base64 does, whatever the line breaks.
    func testPKCS8BodyDecodesLikeFoundationWithAnyLineBreaks() throws {
        for algorithm in SignatureAlgorithm.allCases {
            let pem = try PrivateKey(generatingFor: algorithm).pemPKCS8()
            let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            let expected = try XCTUnwrap(Data(base64Encoded: body)).map { $0 }
            XCTAssertEqual(PEMCodec.pkcs8DER(pem), expected, "\(algorithm)")
            let crlf = pem.replacingOccurrences(of: "\n", with: "\r\n")
            XCTAssertEqual(PEMCodec.pkcs8DER(crlf), expected, "\(algorithm) with CRLF")
            XCTAssertEqual(PEMCodec.pkcs8DER("text before\n" + pem + "text after\n"), expected)
        }
    }

    func testMalformedPKCS8BodiesAreNotDecoded() throws {
        let pem = try PrivateKey(generatingFor: .ES256).pemPKCS8()
        let lines = pem.split(separator: "\n").map(String.init)
        let body = lines.dropFirst().dropLast().joined()
        func wrap(_ b: String) -> String { "-----BEGIN PRIVATE KEY-----\n\(b)\n-----END PRIVATE KEY-----\n" }
        XCTAssertNil(PEMCodec.pkcs8DER(wrap(body + "*")), "a character outside base64")
        XCTAssertNil(PEMCodec.pkcs8DER(wrap(String(body.dropLast()))), "not a whole number of groups")
        XCTAssertNil(PEMCodec.pkcs8DER(wrap("AA=A" + body)), "padding before the end")
        XCTAssertNil(PEMCodec.pkcs8DER(wrap("")))
        XCTAssertNil(PEMCodec.pkcs8DER("-----BEGIN PRIVATE KEY-----\n" + body), "no end line")
        XCTAssertNil(PEMCodec.pkcs8DER(PEMFixtures.traditionalEC), "another PEM label")
    }

    /// EC keys take the EC decoder, the others fall back to the one for any key type; every
    /// kind reads back as the same key, and the traditional EC form still takes the slow path.
    func testEveryKeyTypeReadsBackThroughTheDecoders() throws {
        for algorithm in SignatureAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm)
            let restored = try PrivateKey(pem: key.pemPKCS8())
            XCTAssertEqual(restored.publicKey.components, key.publicKey.components, "\(algorithm)")
        }
        XCTAssertNoThrow(try PrivateKey(pem: PEMFixtures.traditionalEC))
        XCTAssertThrowsError(try PrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
    }
}
