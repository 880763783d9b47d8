import COpenSSL

/// An X.509 v2 CRL (RFC 5280 §5) parsed by OpenSSL; immutable after init.
public final class CertificateRevocationList: @unchecked Sendable {
    let crl: OpaquePointer
    public let der: [UInt8]

    private init(adopting crl: OpaquePointer) throws(CertificateError) {
        let length = i2d_X509_CRL(crl, nil)
        guard length > 0 else { OpenSSLErrors.clear(); X509_CRL_free(crl); throw CertificateError(.invalidEncoding, "cannot encode CRL") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_X509_CRL(crl, &cursor)
        }
        guard written == length else { OpenSSLErrors.clear(); X509_CRL_free(crl); throw CertificateError(.invalidEncoding, "cannot encode CRL") }
        self.crl = crl
        self.der = der
    }

    deinit { X509_CRL_free(crl) }

    public convenience init(der: [UInt8]) throws(CertificateError) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            let crl = d2i_X509_CRL(nil, &cursor, buffer.count)
            if let crl, cursor != buffer.baseAddress.map({ $0 + buffer.count }) { X509_CRL_free(crl); return nil }
            return crl
        }
        guard let parsed else { OpenSSLErrors.clear(); throw CertificateError(.invalidEncoding, "not a DER CRL") }
        try self.init(adopting: parsed)
    }

    /// The first "X509 CRL" block of a PEM text.
    public convenience init(pem: String) throws(CertificateError) {
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, bytes.count < Int(Int32.max) else { throw CertificateError(.invalidEncoding, "empty PEM") }
        let parsed: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509_CRL(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let parsed else { OpenSSLErrors.clear(); throw CertificateError(.invalidEncoding, "no CRL in PEM") }
        try self.init(adopting: parsed)
    }

    public func pem() -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard PEM_write_bio_X509_CRL(bio, crl) == 1 else { OpenSSLErrors.clear(); return "" }
        return BIOText.read(bio)
    }

    public var issuer: DistinguishedName { DistinguishedName(borrowing: X509_CRL_get_issuer(crl)) }
    /// thisUpdate, Unix seconds.
    public var thisUpdate: Int64 { ASN1Conversions.unixTime(X509_CRL_get0_lastUpdate(crl)) }
    public var nextUpdate: Int64? { X509_CRL_get0_nextUpdate(crl).map { ASN1Conversions.unixTime($0) } }

    /// Serial numbers (big-endian magnitudes) of the revoked certificates.
    public var revokedSerialNumbers: [[UInt8]] {
        guard let revoked = X509_CRL_get_REVOKED(crl) else { return [] }
        return (0..<OPENSSL_sk_num(revoked)).compactMap { index in
            OPENSSL_sk_value(revoked, index).map {
                ASN1Conversions.integerBytes(X509_REVOKED_get0_serialNumber(OpaquePointer($0)))
            }
        }
    }

    /// The cRLNumber extension (RFC 5280 §5.2.3), big-endian.
    public var crlNumber: [UInt8]? {
        guard let raw = X509_CRL_get_ext_d2i(crl, NID_crl_number, nil, nil) else { return nil }
        let integer = raw.assumingMemoryBound(to: ASN1_STRING.self)
        defer { ASN1_INTEGER_free(integer) }
        return ASN1Conversions.integerBytes(integer)
    }

    /// The keyIdentifier of the CRL's authorityKeyIdentifier (RFC 5280 §5.2.1).
    public var authorityKeyIdentifier: [UInt8]? {
        guard let raw = X509_CRL_get_ext_d2i(crl, NID_authority_key_identifier, nil, nil) else { return nil }
        let aki = raw.assumingMemoryBound(to: AUTHORITY_KEYID.self)
        defer { AUTHORITY_KEYID_free(aki) }
        return aki.pointee.keyid.map { ASN1Conversions.octets($0) }
    }

    public func isSigned(by key: PublicKey) -> Bool {
        let ok = X509_CRL_verify(crl, key.pkey) == 1
        if !ok { OpenSSLErrors.clear() }
        return ok
    }
}

/// Issues a v2 CRL signed by a CA certificate's key, with authorityKeyIdentifier and cRLNumber
/// (both required by RFC 5280 §5.2 for conforming CRL issuers).
public struct CRLBuilder: Sendable {
    public struct Entry: Equatable, Sendable {
        public var serialNumber: [UInt8]
        public var revocationDate: Int64
        public init(serialNumber: [UInt8], revocationDate: Int64) {
            self.serialNumber = serialNumber
            self.revocationDate = revocationDate
        }
    }

    public var thisUpdate: Int64
    public var nextUpdate: Int64
    /// Monotonically increasing per issuer (RFC 5280 §5.2.3).
    public var crlNumber: UInt64
    public var revoked: [Entry]

    public init(thisUpdate: Int64, nextUpdate: Int64, crlNumber: UInt64, revoked: [Entry] = []) {
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
        self.crlNumber = crlNumber
        self.revoked = revoked
    }

    public func sign(issuer: Certificate, key: PrivateKey) throws(CertificateError) -> CertificateRevocationList {
        guard let issuerKey = try? issuer.publicKey(), issuerKey == key.publicKey else {
            throw CertificateError(.unsupportedKey, "key does not match the issuer certificate")
        }
        guard thisUpdate <= nextUpdate else { throw CertificateError(.invalidEncoding, "nextUpdate before thisUpdate") }
        guard let crl = X509_CRL_new() else { throw CertificateError(.signingFailed, "out of memory") }
        defer { X509_CRL_free(crl) }

        guard X509_CRL_set_version(crl, 1) == 1, // v2
              X509_CRL_set_issuer_name(crl, X509_get_subject_name(issuer.x509)) == 1
        else { OpenSSLErrors.clear(); throw CertificateError(.invalidEncoding, "CRL header") }
        try setTime(thisUpdate) { X509_CRL_set1_lastUpdate(crl, $0) }
        try setTime(nextUpdate) { X509_CRL_set1_nextUpdate(crl, $0) }

        for entry in revoked {
            guard let item = X509_REVOKED_new() else { throw CertificateError(.signingFailed, "out of memory") }
            guard let serial = ASN1_INTEGER_new() else { X509_REVOKED_free(item); throw CertificateError(.signingFailed, "out of memory") }
            defer { ASN1_INTEGER_free(serial) }
            do throws(CertificateError) {
                try X509Fields.setSerial(entry.serialNumber, on: serial)
                guard X509_REVOKED_set_serialNumber(item, serial) == 1 else { throw CertificateError(.invalidEncoding, "serial") }
                try setTime(entry.revocationDate) { X509_REVOKED_set_revocationDate(item, $0) }
            } catch {
                X509_REVOKED_free(item); throw error
            }
            guard X509_CRL_add0_revoked(crl, item) == 1 else { X509_REVOKED_free(item); throw CertificateError(.invalidEncoding, "revoked entry") }
        }
        guard X509_CRL_sort(crl) == 1 else { OpenSSLErrors.clear(); throw CertificateError(.invalidEncoding, "sort") }

        var ctx = X509V3_CTX()
        X509V3_set_ctx(&ctx, issuer.x509, nil, nil, crl, 0)
        try X509Fields.add(.authorityKeyIdentifier, context: &ctx) { X509_CRL_add_ext(crl, $0, -1) == 1 }
        guard let number = ASN1_INTEGER_new() else { throw CertificateError(.signingFailed, "out of memory") }
        defer { ASN1_INTEGER_free(number) }
        guard ASN1_INTEGER_set_uint64(number, crlNumber) == 1,
              X509_CRL_add1_ext_i2d(crl, NID_crl_number, number, 0, 0) == 1
        else { OpenSSLErrors.clear(); throw CertificateError(.invalidExtension, "cRLNumber") }

        guard X509_CRL_sign(crl, key.pkey, X509Fields.digest(for: key)) > 0 else {
            OpenSSLErrors.clear(); throw CertificateError(.signingFailed, "X509_CRL_sign failed")
        }
        // Re-parsed from DER, like certificates: the object built here may hold caches from
        // before it was complete.
        let length = i2d_X509_CRL(crl, nil)
        guard length > 0 else { OpenSSLErrors.clear(); throw CertificateError(.signingFailed, "cannot encode CRL") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_X509_CRL(crl, &cursor)
        }
        guard written == length else { OpenSSLErrors.clear(); throw CertificateError(.signingFailed, "cannot encode CRL") }
        return try CertificateRevocationList(der: der)
    }

    private func setTime(_ unix: Int64, _ apply: (UnsafeMutablePointer<ASN1_STRING>) -> Int32) throws(CertificateError) {
        guard let time = ASN1Conversions.time(unix) else { OpenSSLErrors.clear(); throw CertificateError(.invalidEncoding, "time") }
        defer { ASN1_STRING_free(time) }
        guard apply(time) == 1 else { OpenSSLErrors.clear(); throw CertificateError(.invalidEncoding, "time") }
    }
}
