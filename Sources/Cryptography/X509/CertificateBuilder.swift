import COpenSSL

/// A certificate extension to write. Values are encoded by OpenSSL's X509V3 code
/// (X509V3_EXT_nconf_nid), never by hand.
public enum CertificateExtension: Equatable, Sendable {
    /// RFC 5280 §4.2.1.9; always critical here, as RFC 5280 requires for CA certificates.
    case basicConstraints(isCA: Bool, pathLength: Int?)
    /// RFC 5280 §4.2.1.3; always critical here (ISO/IEC 18013-5 Annex B marks it critical).
    case keyUsage(KeyUsage)
    /// RFC 5280 §4.2.1.12, dotted OIDs.
    case extendedKeyUsage([String], critical: Bool)
    /// RFC 5280 §4.2.1.2 method (1): SHA-1 of the subjectPublicKey BIT STRING.
    case subjectKeyIdentifier
    /// RFC 5280 §4.2.1.1, keyIdentifier only (the issuer's subjectKeyIdentifier).
    case authorityKeyIdentifier
    case issuerAlternativeName([GeneralName])
    case subjectAlternativeName([GeneralName])
    /// RFC 5280 §4.2.1.13, one distribution point per URI, fullName only.
    case crlDistributionPoints([String])
    /// Any extension by dotted OID, its value DER the caller encoded (with swift-asn1): written
    /// through OpenSSL's arbitrary-extension syntax (`DER:` in x509v3_config(5)). The test
    /// device attestations use it for Android's KeyDescription and Apple's nonce extension.
    case arbitrary(oid: String, der: [UInt8], critical: Bool)

    var nid: Int32 {
        switch self {
        case .basicConstraints: return NID_basic_constraints
        case .keyUsage: return NID_key_usage
        case .extendedKeyUsage: return NID_ext_key_usage
        case .subjectKeyIdentifier: return NID_subject_key_identifier
        case .authorityKeyIdentifier: return NID_authority_key_identifier
        case .issuerAlternativeName: return NID_issuer_alt_name
        case .subjectAlternativeName: return NID_subject_alt_name
        case .crlDistributionPoints: return NID_crl_distribution_points
        case .arbitrary: return NID_undef
        }
    }

    /// The value in OpenSSL's configuration syntax (x509v3_config(5)). Every string that goes
    /// into it is checked first, so a comma or colon in a name cannot add extra values.
    func configValue() throws(CertificateError) -> String {
        switch self {
        case .basicConstraints(let isCA, let pathLength):
            guard isCA else { return "critical,CA:FALSE" }
            return "critical,CA:TRUE" + (pathLength.map { ",pathlen:\(max($0, 0))" } ?? "")
        case .keyUsage(let usage):
            guard !usage.configNames.isEmpty else { throw CertificateError(.invalidExtension, "empty keyUsage") }
            return "critical," + usage.configNames.joined(separator: ",")
        case .extendedKeyUsage(let oids, let critical):
            guard !oids.isEmpty, oids.allSatisfy(Self.isDottedOID) else {
                throw CertificateError(.invalidExtension, "extendedKeyUsage needs dotted OIDs")
            }
            return (critical ? "critical," : "") + oids.joined(separator: ",")
        case .subjectKeyIdentifier: return "hash"
        case .authorityKeyIdentifier: return "keyid:always"
        case .issuerAlternativeName(let names), .subjectAlternativeName(let names):
            guard !names.isEmpty else { throw CertificateError(.invalidExtension, "empty alternative name") }
            return try names.map { name throws(CertificateError) in try Self.config(name) }.joined(separator: ",")
        case .crlDistributionPoints(let uris):
            guard !uris.isEmpty else { throw CertificateError(.invalidExtension, "no CRL distribution point") }
            return try uris.map { uri throws(CertificateError) in try Self.config(.uri(uri)) }.joined(separator: ",")
        case .arbitrary(let oid, let der, let critical):
            guard Self.isDottedOID(oid), !der.isEmpty else {
                throw CertificateError(.invalidExtension, "an arbitrary extension needs a dotted OID and a DER value")
            }
            return (critical ? "critical," : "") + "DER:" + der.map { byte in
                let digits = Array("0123456789ABCDEF")
                return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
            }.joined(separator: ":")
        }
    }

    private static func config(_ name: GeneralName) throws(CertificateError) -> String {
        switch name {
        case .uri(let value):
            try checkSafe(value)
            guard value.contains(":") else { throw CertificateError(.invalidExtension, "URI needs a scheme: \(value)") }
            return "URI:" + value
        case .email(let value):
            try checkSafe(value)
            return "email:" + value
        case .dns(let value):
            try checkSafe(value)
            return "DNS:" + value
        }
    }

    /// IA5 text without the separators of the configuration syntax.
    private static func checkSafe(_ value: String) throws(CertificateError) {
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ",") }) else {
            throw CertificateError(.invalidExtension, "name must be printable ASCII without spaces or commas: \(value)")
        }
    }

    private static func isDottedOID(_ oid: String) -> Bool {
        let arcs = oid.split(separator: ".", omittingEmptySubsequences: false)
        return arcs.count >= 2 && arcs.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }
}

/// Issues X.509 v3 certificates through OpenSSL. Fill in the fields, then `selfSign(with:)` or
/// `sign(issuer:key:)`.
public struct CertificateBuilder: Sendable {
    public var subject: DistinguishedName
    public var subjectKey: PublicKey
    /// Big-endian magnitude; `randomSerialNumber()` by default.
    public var serialNumber: [UInt8]
    /// Unix seconds.
    public var notBefore: Int64
    public var notAfter: Int64
    /// Written in this order. Put subjectKeyIdentifier before authorityKeyIdentifier on a
    /// self-signed certificate: OpenSSL reads the key id from the issuer, which is itself.
    public var extensions: [CertificateExtension]

    public init(
        subject: DistinguishedName, subjectKey: PublicKey, notBefore: Int64, notAfter: Int64,
        extensions: [CertificateExtension], serialNumber: [UInt8] = CertificateBuilder.randomSerialNumber()
    ) {
        self.subject = subject
        self.subjectKey = subjectKey
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.extensions = extensions
        self.serialNumber = serialNumber
    }

    /// 16 bytes from the CSPRNG with the top bit clear and the first byte non-zero: a positive
    /// INTEGER of exactly 16 content octets carrying more than 120 random bits (ISO/IEC 18013-5
    /// Annex B asks for at least 63, and RFC 5280 §4.1.2.2 for at most 20 octets).
    public static func randomSerialNumber() -> [UInt8] {
        var bytes = SecureRandom.bytes(16)
        bytes[0] &= 0x7F
        if bytes[0] == 0 { bytes[0] = 0x01 }
        return bytes
    }

    /// Subject is also issuer; `key` must be the private half of `subjectKey`.
    public func selfSign(with key: PrivateKey) throws(CertificateError) -> Certificate {
        guard key.publicKey == subjectKey else { throw CertificateError(.unsupportedKey, "key does not match subjectKey") }
        return try build(issuerName: subject, issuer: nil, key: key)
    }

    /// Issued by `issuer`, signed with its private key `key`.
    public func sign(issuer: Certificate, key: PrivateKey) throws(CertificateError) -> Certificate {
        guard let issuerKey = try? issuer.publicKey(), issuerKey == key.publicKey else {
            throw CertificateError(.unsupportedKey, "key does not match the issuer certificate")
        }
        return try build(issuerName: nil, issuer: issuer, key: key)
    }

    private func build(issuerName: DistinguishedName?, issuer: Certificate?, key: PrivateKey) throws(CertificateError) -> Certificate {
        guard notBefore <= notAfter else { throw CertificateError(.invalidEncoding, "notAfter before notBefore") }
        guard !serialNumber.isEmpty, serialNumber.count <= 20, serialNumber.contains(where: { $0 != 0 }) else {
            throw CertificateError(.invalidEncoding, "serial number must be 1 to 20 octets and non-zero")
        }
        guard let x = X509_new() else { throw CertificateError(.signingFailed, "out of memory") }
        defer { X509_free(x) }

        guard X509_set_version(x, Int(X509_VERSION_3)) == 1 else { throw failure("version") }
        try X509Fields.setSerial(serialNumber, on: X509_get_serialNumber(x))
        try X509Fields.setTime(notBefore, X509_getm_notBefore(x))
        try X509Fields.setTime(notAfter, X509_getm_notAfter(x))
        let subjectName = try subject.makeX509Name()
        defer { X509_NAME_free(subjectName) }
        guard X509_set_subject_name(x, subjectName) == 1 else { throw failure("subject") }
        if let issuer {
            guard X509_set_issuer_name(x, X509_get_subject_name(issuer.x509)) == 1 else { throw failure("issuer") }
        } else {
            guard X509_set_issuer_name(x, subjectName) == 1 else { throw failure("issuer") }
        }
        guard X509_set_pubkey(x, subjectKey.pkey) == 1 else { throw failure("public key") }

        var ctx = X509V3_CTX()
        X509V3_set_ctx(&ctx, issuer?.x509 ?? x, x, nil, nil, 0)
        for ext in extensions {
            try X509Fields.add(ext, context: &ctx) { X509_add_ext(x, $0, -1) == 1 }
        }
        guard X509_sign(x, key.pkey, X509Fields.digest(for: key)) > 0 else {
            OpenSSLErrors.clear(); throw CertificateError(.signingFailed, "X509_sign failed")
        }
        // Re-parse the signed DER instead of adopting the object built here: OpenSSL caches
        // extension data on first use (the authorityKeyIdentifier lookup above may have done
        // so before every extension was added), and a fresh parse also proves the encoding.
        return try Certificate(der: try Self.encode(x))
    }

    private static func encode(_ x: OpaquePointer) throws(CertificateError) -> [UInt8] {
        let length = i2d_X509(x, nil)
        guard length > 0 else { OpenSSLErrors.clear(); throw CertificateError(.signingFailed, "cannot encode") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_X509(x, &cursor)
        }
        guard written == length else { OpenSSLErrors.clear(); throw CertificateError(.signingFailed, "cannot encode") }
        return der
    }

    private func failure(_ what: String) -> CertificateError {
        OpenSSLErrors.clear()
        return CertificateError(.invalidEncoding, "cannot set \(what)")
    }
}

/// Field setters shared by the certificate and CRL builders.
enum X509Fields {
    static func setSerial(_ serial: [UInt8], on integer: UnsafeMutablePointer<ASN1_STRING>?) throws(CertificateError) {
        guard let bn = BN_bin2bn(serial, Int32(serial.count), nil) else { throw CertificateError(.invalidEncoding, "serial") }
        defer { BN_free(bn) }
        guard BN_to_ASN1_INTEGER(bn, integer) != nil else { OpenSSLErrors.clear(); throw CertificateError(.invalidEncoding, "serial") }
    }

    static func setTime(_ unix: Int64, _ target: UnsafeMutablePointer<ASN1_STRING>?) throws(CertificateError) {
        guard let target, ASN1_TIME_set(target, time_t(unix)) != nil else {
            OpenSSLErrors.clear(); throw CertificateError(.invalidEncoding, "time \(unix) out of range")
        }
    }

    /// Encodes one extension with OpenSSL and hands it to `attach` (which copies it).
    static func add(
        _ ext: CertificateExtension, context: inout X509V3_CTX, attach: (OpaquePointer) -> Bool
    ) throws(CertificateError) {
        let value = try ext.configValue()
        let made: OpaquePointer?
        if case .arbitrary(let oid, _, _) = ext {
            made = X509V3_EXT_nconf(nil, &context, oid, value)
        } else {
            made = X509V3_EXT_nconf_nid(nil, &context, ext.nid, value)
        }
        guard let encoded = made else {
            OpenSSLErrors.clear(); throw CertificateError(.invalidExtension, "OpenSSL refused \(ext)")
        }
        defer { X509_EXTENSION_free(encoded) }
        guard attach(encoded) else { OpenSSLErrors.clear(); throw CertificateError(.invalidExtension, "cannot add \(ext)") }
    }

    /// The hash paired with each key: SHA-256 for P-256 (ecdsa-with-SHA256, as ISO/IEC 18013-5
    /// Annex B names), SHA-384 and SHA-512 for the larger curves; none for Ed25519, which
    /// signs the message itself.
    static func digest(for key: PrivateKey) -> OpaquePointer? {
        switch key.kind {
        case .ec(.p256), .rsa: return EVP_sha256()
        case .ec(.p384): return EVP_sha384()
        case .ec(.p521): return EVP_sha512()
        case .ed25519: return nil
        }
    }
}
