import Cryptography
import Foundation
import XCTest
import TestSupport

/// ISO/IEC 18013-5 Annex B certificates built through OpenSSL, read back through OpenSSL's
/// decoders, validated with X509_verify_cert, and cross-checked with pyca/cryptography.
final class X509Tests: XCTestCase {
    private let now: Int64 = 1_767_225_600 // 2026-01-01T00:00:00Z
    private let day: Int64 = 86_400

    private struct PKI {
        let iacaKey: PrivateKey
        let iaca: Certificate
        let dsKey: PrivateKey
        let ds: Certificate
    }

    private func makePKI(country: String = "NL", commonName: String = "Trustbed IACA") throws -> PKI {
        let iacaKey = try PrivateKey(generatingFor: .ES256)
        let iaca = try AnnexB.makeIACA(
            key: iacaKey, country: country, stateOrProvince: "Zuid-Holland", organization: "Trustbed",
            commonName: commonName, issuerAltName: .uri("https://issuer.example/pid"),
            crlURL: "https://issuer.example/pid/iaca.crl",
            validity: .init(notBefore: now - day, notAfter: now + 3650 * day))
        let dsKey = try PrivateKey(generatingFor: .ES256)
        let ds = try AnnexB.makeDocumentSigner(
            subjectKey: dsKey.publicKey, iaca: iaca, iacaKey: iacaKey, organization: "Trustbed",
            commonName: "Trustbed DS 1", issuerAltName: .email("pki@issuer.example"),
            crlURL: "https://issuer.example/pid/iaca.crl", validity: .init(notBefore: now - day, notAfter: now + 365 * day))
        return PKI(iacaKey: iacaKey, iaca: iaca, dsKey: dsKey, ds: ds)
    }

    func testIACAExtensionsFollowAnnexB() throws {
        let pki = try makePKI()
        let iaca = pki.iaca
        XCTAssertEqual(iaca.subject, DistinguishedName(country: "NL", stateOrProvince: "Zuid-Holland", organization: "Trustbed",
                                                       commonName: "Trustbed IACA"))
        XCTAssertEqual(iaca.issuer, iaca.subject)
        XCTAssertEqual(iaca.isCA, true)
        XCTAssertEqual(iaca.pathLengthConstraint, 0)
        XCTAssertEqual(iaca.keyUsage, [.keyCertSign, .cRLSign])
        XCTAssertNil(iaca.extendedKeyUsage)
        XCTAssertEqual(iaca.subjectKeyIdentifier?.count, 20)
        XCTAssertEqual(iaca.issuerAlternativeNames, [.uri("https://issuer.example/pid")])
        XCTAssertEqual(iaca.crlDistributionPointURIs, ["https://issuer.example/pid/iaca.crl"])
        XCTAssertEqual(Set(iaca.criticalExtensionOIDs), ["2.5.29.19", "2.5.29.15"])
        XCTAssertTrue(iaca.isSigned(by: pki.iacaKey.publicKey))
        XCTAssertEqual(try iaca.publicKey(), pki.iacaKey.publicKey)
        XCTAssertEqual(iaca.notBefore, now - day)
        XCTAssertEqual(iaca.notAfter, now + 3650 * day)
        XCTAssertFalse(iaca.serialIsNegative)
        XCTAssertEqual(iaca.serialNumber.count, 16)
        XCTAssertTrue(iaca.text.contains("ecdsa-with-SHA256"), iaca.text)
    }

    func testDocumentSignerExtensionsFollowAnnexB() throws {
        let pki = try makePKI()
        let ds = pki.ds
        XCTAssertEqual(ds.subject, DistinguishedName(country: "NL", stateOrProvince: "Zuid-Holland", organization: "Trustbed",
                                                     commonName: "Trustbed DS 1"))
        XCTAssertEqual(ds.issuer, pki.iaca.subject)
        XCTAssertNil(ds.isCA, "no basicConstraints on a DS certificate")
        XCTAssertEqual(ds.keyUsage, [.digitalSignature])
        XCTAssertEqual(ds.extendedKeyUsage, [AnnexB.documentSignerEKU])
        XCTAssertEqual(ds.authorityKeyIdentifier, pki.iaca.subjectKeyIdentifier)
        XCTAssertNotNil(ds.subjectKeyIdentifier)
        XCTAssertNotEqual(ds.subjectKeyIdentifier, pki.iaca.subjectKeyIdentifier)
        XCTAssertEqual(ds.issuerAlternativeNames, [.email("pki@issuer.example")])
        XCTAssertEqual(ds.crlDistributionPointURIs, ["https://issuer.example/pid/iaca.crl"])
        XCTAssertEqual(Set(ds.criticalExtensionOIDs), ["2.5.29.15", "2.5.29.37"])
        XCTAssertTrue(ds.isSigned(by: pki.iacaKey.publicKey))
        XCTAssertFalse(ds.isSigned(by: pki.dsKey.publicKey))
        XCTAssertNotEqual(ds.serialNumber, pki.iaca.serialNumber)
    }

    func testChainValidates() throws {
        let pki = try makePKI()
        let path = try Certificate.verifyChain(leaf: pki.ds, roots: [pki.iaca], at: now,
                                               requiredExtendedKeyUsage: AnnexB.documentSignerEKU)
        XCTAssertEqual(path, [pki.ds, pki.iaca])
        XCTAssertNoThrow(try Certificate.verifyChain(leaf: pki.iaca, roots: [pki.iaca], at: now))
    }

    func testChainFailures() throws {
        let pki = try makePKI(), other = try makePKI()
        XCTAssertEqual(validationCode { try Certificate.verifyChain(leaf: pki.ds, roots: [other.iaca], at: self.now) },
                       .untrustedIssuer)
        // Same subject name, different key: the signature cannot verify.
        let impostor = try makePKI(commonName: "Trustbed IACA")
        XCTAssertNotNil(validationCode { try Certificate.verifyChain(leaf: pki.ds, roots: [impostor.iaca], at: self.now) })
        XCTAssertEqual(validationCode { try Certificate.verifyChain(leaf: pki.ds, roots: [pki.iaca], at: self.now + 400 * self.day) },
                       .expired)
        XCTAssertEqual(validationCode { try Certificate.verifyChain(leaf: pki.ds, roots: [pki.iaca], at: self.now - 2 * self.day) },
                       .notYetValid)
        XCTAssertEqual(validationCode { try Certificate.verifyChain(leaf: pki.ds, roots: [], at: self.now) }, .untrustedIssuer)
        // The IACA has no document signer EKU.
        XCTAssertEqual(validationCode {
            try Certificate.verifyChain(leaf: pki.iaca, roots: [pki.iaca], at: self.now, requiredExtendedKeyUsage: AnnexB.documentSignerEKU)
        }, .missingExtendedKeyUsage)
        // pathLen 0: a DS certificate cannot act as an issuer, and neither can a CA below the IACA.
        let subKey = try PrivateKey(generatingFor: .ES256)
        let subCA = try CertificateBuilder(
            subject: DistinguishedName(country: "NL", commonName: "Sub CA"), subjectKey: subKey.publicKey,
            notBefore: now - day, notAfter: now + 100 * day,
            extensions: [.basicConstraints(isCA: true, pathLength: nil), .keyUsage([.keyCertSign, .cRLSign]),
                         .subjectKeyIdentifier, .authorityKeyIdentifier]
        ).sign(issuer: pki.iaca, key: pki.iacaKey)
        let leafKey = try PrivateKey(generatingFor: .ES256)
        let leaf = try CertificateBuilder(
            subject: DistinguishedName(country: "NL", commonName: "Leaf"), subjectKey: leafKey.publicKey,
            notBefore: now - day, notAfter: now + 10 * day,
            extensions: [.keyUsage([.digitalSignature]), .subjectKeyIdentifier, .authorityKeyIdentifier]
        ).sign(issuer: subCA, key: subKey)
        XCTAssertEqual(validationCode {
            try Certificate.verifyChain(leaf: leaf, intermediates: [subCA], roots: [pki.iaca], at: self.now)
        }, .pathLengthExceeded)
    }

    func testArbitraryExtensionCarriesTheCallersDER() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let der: [UInt8] = [0x30, 0x06, 0xA1, 0x04, 0x04, 0x02, 0xCA, 0xFE] // SEQUENCE { [1] OCTET STRING CAFE }
        let certificate = try CertificateBuilder(
            subject: DistinguishedName(commonName: "Arbitrary"), subjectKey: key.publicKey, notBefore: now, notAfter: now + day,
            extensions: [.arbitrary(oid: "1.2.840.113635.100.8.2", der: der, critical: false)]
        ).selfSign(with: key)
        XCTAssertEqual(certificate.extensionValue(oid: "1.2.840.113635.100.8.2"), der)
        for bad in [CertificateExtension.arbitrary(oid: "not.an.oid", der: der, critical: false),
                    .arbitrary(oid: "1.2.3", der: [], critical: true)] {
            XCTAssertThrowsError(try CertificateBuilder(
                subject: DistinguishedName(commonName: "Bad"), subjectKey: key.publicKey, notBefore: now, notAfter: now + day,
                extensions: [bad]).selfSign(with: key))
        }
    }

    func testCRLRevokesAndValidates() throws {
        let pki = try makePKI()
        let empty = try AnnexB.makeCRL(iaca: pki.iaca, iacaKey: pki.iacaKey, thisUpdate: now - 60, nextUpdate: now + 7 * day, crlNumber: 1)
        XCTAssertEqual(empty.issuer, pki.iaca.subject)
        XCTAssertEqual(empty.thisUpdate, now - 60)
        XCTAssertEqual(empty.nextUpdate, now + 7 * day)
        XCTAssertEqual(empty.crlNumber, [1])
        XCTAssertEqual(empty.authorityKeyIdentifier, pki.iaca.subjectKeyIdentifier)
        XCTAssertEqual(empty.revokedSerialNumbers, [])
        XCTAssertTrue(empty.isSigned(by: pki.iacaKey.publicKey))
        XCTAssertFalse(empty.isSigned(by: pki.dsKey.publicKey))
        XCTAssertEqual(try CertificateRevocationList(der: empty.der).der, empty.der)
        XCTAssertTrue(empty.pem().hasPrefix("-----BEGIN X509 CRL-----"))
        XCTAssertEqual(try CertificateRevocationList(pem: empty.pem()).der, empty.der)
        XCTAssertThrowsError(try CertificateRevocationList(pem: pki.iaca.pem()), "a certificate is not a CRL")
        XCTAssertNoThrow(try Certificate.verifyChain(leaf: pki.ds, roots: [pki.iaca], at: now, crls: [empty]))

        let revoking = try AnnexB.makeCRL(
            iaca: pki.iaca, iacaKey: pki.iacaKey, thisUpdate: now - 60, nextUpdate: now + 7 * day, crlNumber: 300,
            revoked: [.init(serialNumber: pki.ds.serialNumber, revocationDate: now - 120)])
        XCTAssertEqual(revoking.revokedSerialNumbers, [pki.ds.serialNumber])
        XCTAssertEqual(revoking.crlNumber, [0x01, 0x2C])
        XCTAssertEqual(validationCode { try Certificate.verifyChain(leaf: pki.ds, roots: [pki.iaca], at: self.now, crls: [revoking]) },
                       .revoked)
        // A CRL from another issuer does not cover this chain.
        let other = try makePKI()
        let foreign = try AnnexB.makeCRL(iaca: other.iaca, iacaKey: other.iacaKey, thisUpdate: now - 60, nextUpdate: now + day, crlNumber: 1)
        XCTAssertEqual(validationCode { try Certificate.verifyChain(leaf: pki.ds, roots: [pki.iaca], at: self.now, crls: [foreign]) },
                       .crlProblem)
    }

    /// Extensions written after the authorityKeyIdentifier (whose encoding makes OpenSSL look
    /// at the issuer, here the certificate itself) are still seen when reading back.
    func testSelfSignedWithAuthorityKeyIdentifierReadsEveryExtension() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let cert = try CertificateBuilder(
            subject: DistinguishedName(country: "DE", organization: "Ünïcode GmbH", commonName: "Root"), subjectKey: key.publicKey,
            notBefore: now, notAfter: now + day,
            extensions: [.subjectKeyIdentifier, .authorityKeyIdentifier, .keyUsage([.keyCertSign, .cRLSign]),
                         .basicConstraints(isCA: true, pathLength: 1), .subjectAlternativeName([.dns("root.example")])]
        ).selfSign(with: key)
        XCTAssertEqual(cert.authorityKeyIdentifier, cert.subjectKeyIdentifier)
        XCTAssertEqual(cert.keyUsage, [.keyCertSign, .cRLSign])
        XCTAssertEqual(cert.isCA, true)
        XCTAssertEqual(cert.pathLengthConstraint, 1)
        XCTAssertEqual(cert.subjectAlternativeNames, [.dns("root.example")])
        XCTAssertEqual(cert.subject.organization, "Ünïcode GmbH")
        XCTAssertEqual(cert.subjectText, "CN=Root,O=Ünïcode GmbH,C=DE")
        XCTAssertEqual(cert.extensionOIDs, ["2.5.29.14", "2.5.29.35", "2.5.29.15", "2.5.29.19", "2.5.29.17"])
        XCTAssertNoThrow(try Certificate.verifyChain(leaf: cert, roots: [cert], at: now))
    }

    func testEncodingsRoundTrip() throws {
        let pki = try makePKI()
        XCTAssertEqual(try Certificate(der: pki.ds.der), pki.ds)
        XCTAssertEqual(try Certificate(pem: pki.ds.pem()), pki.ds)
        XCTAssertEqual(try Certificate.certificates(pem: pki.ds.pem() + pki.iaca.pem()), [pki.ds, pki.iaca])
        let x5c = Certificate.x5c([pki.ds, pki.iaca])
        XCTAssertEqual(x5c.first, Data(pki.ds.der).base64EncodedString())
        XCTAssertEqual(try Certificate.chain(x5c: x5c), [pki.ds, pki.iaca])
        XCTAssertThrowsError(try Certificate.chain(x5c: ["not base64!"]))
        // base64url is not x5c's alphabet (RFC 7515 §4.1.6). Replacing "+" alone was flaky: a
        // random certificate's base64 need not contain one.
        XCTAssertThrowsError(try Certificate.chain(x5c: ["-" + Data(pki.ds.der).base64EncodedString().dropFirst()]))
        XCTAssertThrowsError(try Certificate.chain(x5c: []))
        XCTAssertThrowsError(try Certificate(der: pki.ds.der + [0]))
        XCTAssertThrowsError(try Certificate(der: Array(pki.ds.der.dropLast())))
        XCTAssertThrowsError(try Certificate(pem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
    }

    func testBuilderRefusesBadInput() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        func build(_ name: DistinguishedName, _ extensions: [CertificateExtension], serial: [UInt8] = CertificateBuilder.randomSerialNumber()) throws -> Certificate {
            try CertificateBuilder(subject: name, subjectKey: key.publicKey, notBefore: now, notAfter: now + day,
                                   extensions: extensions, serialNumber: serial).selfSign(with: key)
        }
        let name = DistinguishedName(country: "NL", commonName: "x")
        XCTAssertThrowsError(try build(DistinguishedName(country: "Netherlands", commonName: "x"), []))
        XCTAssertThrowsError(try build(DistinguishedName(country: "nl", commonName: "x"), []))
        // A comma would smuggle a second name into OpenSSL's configuration syntax.
        XCTAssertThrowsError(try build(name, [.issuerAlternativeName([.uri("https://a.example,email:x@y")])]))
        XCTAssertThrowsError(try build(name, [.crlDistributionPoints(["no-scheme"])]))
        XCTAssertThrowsError(try build(name, [.extendedKeyUsage(["1.2.x"], critical: false)]))
        XCTAssertThrowsError(try build(name, [], serial: [UInt8](repeating: 1, count: 21)))
        XCTAssertThrowsError(try build(name, [], serial: [0]))
        let other = try PrivateKey(generatingFor: .ES256)
        XCTAssertThrowsError(try CertificateBuilder(subject: name, subjectKey: other.publicKey, notBefore: now, notAfter: now + day,
                                                    extensions: []).selfSign(with: key))
        XCTAssertThrowsError(try AnnexB.makeIACA(key: key, country: "NL", commonName: "x", issuerAltName: .uri("https://a"),
                                                 crlURL: "https://a/crl", validity: .init(notBefore: now, notAfter: now + 30 * 365 * day)))
        // Serials: positive, 16 octets, distinct.
        let serials = (0..<50).map { _ in CertificateBuilder.randomSerialNumber() }
        XCTAssertTrue(serials.allSatisfy { $0.count == 16 && $0[0] & 0x80 == 0 && $0[0] != 0 })
        XCTAssertEqual(Set(serials).count, serials.count)
        // P-384 keys get ecdsa-with-SHA384.
        let p384 = try PrivateKey(generatingFor: .ES384)
        let cert = try CertificateBuilder(subject: name, subjectKey: p384.publicKey, notBefore: now, notAfter: now + day,
                                          extensions: [.subjectKeyIdentifier]).selfSign(with: p384)
        XCTAssertTrue(cert.text.contains("ecdsa-with-SHA384"))
        XCTAssertNil(cert.keyUsage)
        XCTAssertNil(cert.crlDistributionPointURIs)
    }

    /// pyca/cryptography parses the IACA, DS and CRL on its own and reports every field.
    func testPythonCryptographyReadsTheSameCertificates() throws {
        let pki = try makePKI()
        let crl = try AnnexB.makeCRL(iaca: pki.iaca, iacaKey: pki.iacaKey, thisUpdate: now, nextUpdate: now + day, crlNumber: 7,
                                     revoked: [.init(serialNumber: [0x01, 0x02, 0x03], revocationDate: now)])
        let input = [pki.iaca.der, pki.ds.der, crl.der].map { Data($0).base64EncodedString() }.joined(separator: "\n")
        let output = try PythonRunner.run(Self.script, input: input)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let iaca = try XCTUnwrap(report["iaca"] as? [String: Any]), ds = try XCTUnwrap(report["ds"] as? [String: Any])
        let crlReport = try XCTUnwrap(report["crl"] as? [String: Any])

        XCTAssertEqual(iaca["bc"] as? String, "ca=True pathlen=0 critical=True")
        XCTAssertEqual(iaca["ku"] as? [String], ["crl_sign", "key_cert_sign"])
        XCTAssertEqual(iaca["ku_critical"] as? Bool, true)
        XCTAssertEqual(iaca["ian"] as? [String], ["https://issuer.example/pid"])
        XCTAssertEqual(iaca["crldp"] as? [String], ["https://issuer.example/pid/iaca.crl"])
        XCTAssertEqual(iaca["ski"] as? String, hexString(pki.iaca.subjectKeyIdentifier ?? []))
        XCTAssertEqual(iaca["ski_matches_key"] as? Bool, true)
        XCTAssertEqual(iaca["self_signed_ok"] as? Bool, true)
        XCTAssertEqual(iaca["sig_hash"] as? String, "sha256")
        XCTAssertEqual(iaca["subject"] as? String, "C=NL,ST=Zuid-Holland,O=Trustbed,CN=Trustbed IACA")
        XCTAssertEqual(iaca["country_printable"] as? Bool, true)
        XCTAssertEqual(iaca["serial_positive"] as? Bool, true)
        XCTAssertLessThanOrEqual(iaca["serial_octets"] as? Int ?? 99, 20)
        XCTAssertGreaterThanOrEqual(iaca["serial_bits"] as? Int ?? 0, 64)

        XCTAssertEqual(ds["bc"] as? String, "absent")
        XCTAssertEqual(ds["ku"] as? [String], ["digital_signature"])
        XCTAssertEqual(ds["eku"] as? [String], ["1.0.18013.5.1.2"])
        XCTAssertEqual(ds["eku_critical"] as? Bool, true)
        XCTAssertEqual(ds["aki"] as? String, hexString(pki.iaca.subjectKeyIdentifier ?? []))
        XCTAssertEqual(ds["aki_only_keyid"] as? Bool, true)
        XCTAssertEqual(ds["ian"] as? [String], ["pki@issuer.example"])
        XCTAssertEqual(ds["signed_by_iaca"] as? Bool, true)
        XCTAssertEqual(ds["issuer"] as? String, "C=NL,ST=Zuid-Holland,O=Trustbed,CN=Trustbed IACA")

        XCTAssertEqual(crlReport["number"] as? Int, 7)
        XCTAssertEqual(crlReport["revoked"] as? [Int], [0x010203])
        XCTAssertEqual(crlReport["signed_by_iaca"] as? Bool, true)
        XCTAssertEqual(crlReport["aki"] as? String, hexString(pki.iaca.subjectKeyIdentifier ?? []))
        XCTAssertEqual(crlReport["next_update"] as? Int, Int(now + day))
    }

    private func validationCode(_ body: () throws -> Any) -> CertificateError.Code? {
        do {
            _ = try body()
            return nil
        } catch let error as CertificateError {
            return error.code
        } catch {
            XCTFail("unexpected \(error)")
            return nil
        }
    }

    private static let script = #"""
import sys, json, base64, datetime
try:
    from cryptography import x509
    from cryptography.x509.oid import ExtensionOID, NameOID
    from cryptography.hazmat.primitives.asymmetric import ec
except ImportError:
    sys.exit(3)

iaca_der, ds_der, crl_der = [base64.b64decode(l) for l in sys.stdin.read().split()]
iaca = x509.load_der_x509_certificate(iaca_der)
ds = x509.load_der_x509_certificate(ds_der)
crl = x509.load_der_x509_crl(crl_der)

def ext(cert, oid):
    try:
        return cert.extensions.get_extension_for_oid(oid)
    except x509.ExtensionNotFound:
        return None

def describe(cert):
    out = {}
    bc = ext(cert, ExtensionOID.BASIC_CONSTRAINTS)
    out["bc"] = f"ca={bc.value.ca} pathlen={bc.value.path_length} critical={bc.critical}" if bc else "absent"
    ku = ext(cert, ExtensionOID.KEY_USAGE)
    names = ["digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
             "key_agreement", "key_cert_sign", "crl_sign"]
    out["ku"] = sorted(n for n in names if getattr(ku.value, n))
    out["ku_critical"] = ku.critical
    eku = ext(cert, ExtensionOID.EXTENDED_KEY_USAGE)
    if eku:
        out["eku"] = [o.dotted_string for o in eku.value]
        out["eku_critical"] = eku.critical
    ski = ext(cert, ExtensionOID.SUBJECT_KEY_IDENTIFIER)
    out["ski"] = ski.value.digest.hex()
    out["ski_matches_key"] = ski.value.digest == x509.SubjectKeyIdentifier.from_public_key(cert.public_key()).digest
    aki = ext(cert, ExtensionOID.AUTHORITY_KEY_IDENTIFIER)
    if aki:
        out["aki"] = aki.value.key_identifier.hex()
        out["aki_only_keyid"] = aki.value.authority_cert_issuer is None and aki.value.authority_cert_serial_number is None
    ian = ext(cert, ExtensionOID.ISSUER_ALTERNATIVE_NAME)
    out["ian"] = [n.value for n in ian.value]
    dp = ext(cert, ExtensionOID.CRL_DISTRIBUTION_POINTS)
    out["crldp"] = [n.value for p in dp.value for n in p.full_name]
    out["sig_hash"] = cert.signature_hash_algorithm.name
    out["subject"] = cert.subject.rfc4514_string().split(",")[::-1]
    out["subject"] = ",".join(out["subject"])
    out["issuer"] = ",".join(cert.issuer.rfc4514_string().split(",")[::-1])
    c = cert.subject.get_attributes_for_oid(NameOID.COUNTRY_NAME)[0]
    out["country_printable"] = c._type.name == "PrintableString"
    out["serial_positive"] = cert.serial_number > 0
    out["serial_octets"] = (cert.serial_number.bit_length() + 8) // 8
    out["serial_bits"] = cert.serial_number.bit_length()
    return out

def verifies(cert, key):
    try:
        key.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))
        return True
    except Exception:
        return False

def next_update(crl):
    # next_update_utc appeared in cryptography 42; older versions give a naive UTC datetime.
    value = getattr(crl, "next_update_utc", None)
    if value is None:
        value = crl.next_update.replace(tzinfo=datetime.timezone.utc)
    return int(value.timestamp())

report = {"iaca": describe(iaca), "ds": describe(ds)}
report["iaca"]["self_signed_ok"] = verifies(iaca, iaca.public_key())
report["ds"]["signed_by_iaca"] = verifies(ds, iaca.public_key())
report["crl"] = {
    "number": crl.extensions.get_extension_for_oid(ExtensionOID.CRL_NUMBER).value.crl_number,
    "revoked": [r.serial_number for r in crl],
    "signed_by_iaca": crl.is_signature_valid(iaca.public_key()),
    "aki": crl.extensions.get_extension_for_oid(ExtensionOID.AUTHORITY_KEY_IDENTIFIER).value.key_identifier.hex(),
    "next_update": next_update(crl),
}
print(json.dumps(report))
"""#
}

