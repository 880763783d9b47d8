import XCTest
import CBOR
import COSE
import Cryptography
import MDoc

/// A small mdoc PKI (IACA root → document signer, Annex B profiles), a device key and a PID,
/// shared by the tests. Times are fixed Unix seconds so validity checks are deterministic.
struct MDocFixture {
    static let iacaFrom: Int64 = 1_700_000_000          // 2023-11-14
    static let signed: Int64 = 1_710_000_000            // 2024-03-09
    static let validUntil: Int64 = signed + 90 * 86_400
    static let statusURI = "https://pid.example/status/1"

    let iacaKey: PrivateKey
    let iaca: Certificate
    let signerKey: PrivateKey
    let documentSigner: Certificate
    let deviceKey: PrivateKey
    /// When the MSO is signed; the certificates are valid from `iacaFrom` (or a day before `signed`).
    let signed: Int64

    /// `signed` defaults to a fixed time; pass the wall clock for checkers that use it.
    init(signed: Int64 = MDocFixture.signed) throws {
        self.signed = signed
        let iacaFrom = min(Self.iacaFrom, signed - 86_400)
        iacaKey = try PrivateKey(generatingFor: .ES256)
        iaca = try AnnexB.makeIACA(
            key: iacaKey, country: "DE", organization: "Trustbed", commonName: "Trustbed Test IACA",
            issuerAltName: .uri("https://pid.example"), crlURL: "https://pid.example/iaca.crl",
            validity: .init(notBefore: iacaFrom, notAfter: iacaFrom + 10 * 365 * 86_400))
        signerKey = try PrivateKey(generatingFor: .ES256)
        documentSigner = try AnnexB.makeDocumentSigner(
            subjectKey: signerKey.publicKey, iaca: iaca, iacaKey: iacaKey, organization: "Trustbed",
            commonName: "Trustbed Test DS", issuerAltName: .uri("https://pid.example"),
            crlURL: "https://pid.example/iaca.crl",
            validity: .init(notBefore: signed - 86_400, notAfter: signed + 300 * 86_400))
        deviceKey = try PrivateKey(generatingFor: .ES256)
    }

    static let pidElements: [(identifier: String, value: CBORValue)] = [
        ("family_name", "Mustermann"),
        ("given_name", "Erika"),
        ("birth_date", .fullDate(CBORFullDate(year: 1984, month: 1, day: 26)!)),
        ("birth_place", "Berlin"),
        ("nationality", ["DE"]),
        ("resident_address", "Heidestraße 17, 51147 Köln"),
        ("age_over_18", true),
        ("age_in_years", 40),
        ("issuance_date", .fullDate(CBORFullDate(year: 2024, month: 3, day: 9)!)),
        ("expiry_date", .fullDate(CBORFullDate(year: 2024, month: 6, day: 7)!)),
        ("issuing_authority", "Trustbed PID Provider"),
        ("issuing_country", "DE"),
    ]

    var validity: ValidityInfo { ValidityInfo(signed: signed, validFrom: signed, validUntil: signed + 90 * 86_400) }

    func signer() throws -> DocumentSigner {
        try DocumentSigner(key: signerKey, certificateChain: [documentSigner])
    }

    func issuePID(status: StatusListReference? = StatusListReference(index: 42, uri: statusURI)) throws -> IssuerSigned {
        try IssuerSigned.issue(
            docType: EUDIPID.docType, nameSpaces: [EUDIPID.nameSpace: Self.pidElements],
            deviceKey: COSEKey(publicKey: deviceKey.publicKey), validity: validity, status: status, signer: signer())
    }
}

/// Asserts that `body` throws exactly `expected`.
func assertMDocError<T>(
    _ expected: MDocError, _ body: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line
) {
    do {
        _ = try body()
        XCTFail("expected \(expected), nothing thrown", file: file, line: line)
    } catch let error as MDocError {
        XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
        XCTFail("expected \(expected), got \(error)", file: file, line: line)
    }
}
