import COpenSSL

/// An X.509 certificate parsed by OpenSSL. Immutable (the X509 is never changed after parsing,
/// and OpenSSL caches extension data at parse time), so it is shared freely across threads.
public final class Certificate: @unchecked Sendable {
    let x509: OpaquePointer
    /// The DER encoding, exactly as parsed or signed.
    public let der: [UInt8]

    /// Takes ownership of `x509`.
    private init(adopting x509: OpaquePointer) throws(CertificateError) {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { OpenSSLErrors.clear(); X509_free(x509); throw CertificateError(.invalidEncoding, "cannot encode") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        guard written == length else { OpenSSLErrors.clear(); X509_free(x509); throw CertificateError(.invalidEncoding, "cannot encode") }
        self.x509 = x509
        self.der = der
        // Computes and caches the extension flags now, while the object is still private to
        // this thread; later reads only look at the cache.
        _ = X509_get_extension_flags(x509)
    }

    deinit { X509_free(x509) }

    /// One DER certificate; trailing bytes are refused.
    public convenience init(der: [UInt8]) throws(CertificateError) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            let x = d2i_X509(nil, &cursor, buffer.count)
            if let x, cursor != buffer.baseAddress.map({ $0 + buffer.count }) { X509_free(x); return nil }
            return x
        }
        guard let parsed else { OpenSSLErrors.clear(); throw CertificateError(.invalidEncoding, "not a DER certificate") }
        try self.init(adopting: parsed)
    }

    /// The first "CERTIFICATE" block of a PEM text.
    public convenience init(pem: String) throws(CertificateError) {
        guard let first = try Self.certificates(pem: pem).first?.der else {
            throw CertificateError(.invalidEncoding, "no certificate in PEM")
        }
        try self.init(der: first)
    }

    /// Every "CERTIFICATE" block of a PEM text, in order (a chain file).
    public static func certificates(pem: String) throws(CertificateError) -> [Certificate] {
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, bytes.count < Int(Int32.max) else { throw CertificateError(.invalidEncoding, "empty PEM") }
        var result: [Certificate] = []
        var failure: CertificateError?
        bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Void in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return }
            defer { BIO_free(bio) }
            while let x = PEM_read_bio_X509(bio, nil, { _, _, _, _ in 0 }, nil) {
                do throws(CertificateError) { result.append(try Certificate(adopting: x)) } catch { failure = error; return }
            }
        }
        // Reading stops with a "no start line" error at the end of input; that is the normal end.
        OpenSSLErrors.clear()
        if let failure { throw failure }
        guard !result.isEmpty else { throw CertificateError(.invalidEncoding, "no certificate in PEM") }
        return result
    }

    public func pem() -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard PEM_write_bio_X509(bio, x509) == 1 else { OpenSSLErrors.clear(); return "" }
        return BIOText.read(bio)
    }

    public var subject: DistinguishedName { DistinguishedName(borrowing: X509_get_subject_name(x509)) }
    public var issuer: DistinguishedName { DistinguishedName(borrowing: X509_get_issuer_name(x509)) }
    /// RFC 2253 text of the subject, every attribute included.
    public var subjectText: String { DistinguishedName.text(of: X509_get_subject_name(x509)) }
    public var issuerText: String { DistinguishedName.text(of: X509_get_issuer_name(x509)) }

    /// Big-endian magnitude of the serial number (no DER sign byte).
    public var serialNumber: [UInt8] { ASN1Conversions.integerBytes(X509_get0_serialNumber(x509)) }
    /// True when the serial's DER INTEGER is negative (RFC 5280 §4.1.2.2 forbids it).
    public var serialIsNegative: Bool { ASN1_STRING_type(X509_get0_serialNumber(x509)) == V_ASN1_NEG_INTEGER }

    /// Unix seconds.
    public var notBefore: Int64 { ASN1Conversions.unixTime(X509_get0_notBefore(x509)) }
    public var notAfter: Int64 { ASN1Conversions.unixTime(X509_get0_notAfter(x509)) }

    /// The subject public key; fails for key types this library does not use.
    public func publicKey() throws(CryptoError) -> PublicKey {
        guard let pkey = X509_get_pubkey(x509) else { OpenSSLErrors.clear(); throw .invalidKey("certificate has no usable key") }
        return try PublicKey(adopting: pkey)
    }

    /// Whether `key` verifies this certificate's signature (the check, not a path validation).
    public func isSigned(by key: PublicKey) -> Bool {
        let ok = X509_verify(x509, key.pkey) == 1
        if !ok { OpenSSLErrors.clear() }
        return ok
    }

    /// A human-readable dump, as `openssl x509 -text` prints it (logs and test diagnostics).
    public var text: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard X509_print_ex(bio, x509, 0, 0) == 1 else { OpenSSLErrors.clear(); return "" }
        return BIOText.read(bio)
    }
}

extension Certificate: Equatable, Hashable {
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.der == rhs.der }
    public func hash(into hasher: inout Hasher) { hasher.combine(der) }
}

/// Reading OpenSSL's ASN.1 values into Swift ones.
enum ASN1Conversions {
    static func integerBytes(_ integer: UnsafePointer<ASN1_STRING>?) -> [UInt8] {
        guard let integer, let bn = ASN1_INTEGER_to_BN(integer, nil) else { OpenSSLErrors.clear(); return [] }
        defer { BN_free(bn) }
        var out = [UInt8](repeating: 0, count: max(Int((BN_num_bits(bn) + 7) / 8), 1))
        _ = BN_bn2binpad(bn, &out, Int32(out.count))
        return out
    }

    static func octets(_ string: UnsafePointer<ASN1_STRING>?) -> [UInt8] {
        guard let string, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
    }

    /// ASN1_TIME to Unix seconds, via the day/second difference from the epoch.
    static func unixTime(_ time: UnsafePointer<ASN1_STRING>?) -> Int64 {
        guard let time, let epoch = ASN1_TIME_set(nil, 0) else { return 0 }
        defer { ASN1_STRING_free(epoch) }
        var days: Int32 = 0
        var seconds: Int32 = 0
        guard ASN1_TIME_diff(&days, &seconds, epoch, time) == 1 else { OpenSSLErrors.clear(); return 0 }
        return Int64(days) * 86_400 + Int64(seconds)
    }

    /// A new ASN1_TIME (UTCTime through 2049, GeneralizedTime after, as RFC 5280 §4.1.2.5 says).
    static func time(_ unix: Int64) -> UnsafeMutablePointer<ASN1_STRING>? { ASN1_TIME_set(nil, time_t(unix)) }
}
