import COpenSSL

extension Certificate {
    /// RFC 5280 path validation by OpenSSL (X509_verify_cert) at time `time` (Unix seconds):
    /// signatures, validity periods, basicConstraints and pathLen, keyUsage of issuers, and
    /// critical extensions OpenSSL does not understand. `roots` are the only trust anchors (a
    /// partial chain ending at an intermediate is not accepted); `intermediates` are untrusted
    /// helpers. With `crls`, every certificate in the path must be covered by a CRL of its issuer
    /// and not be listed in it. Returns the validated path, leaf first.
    ///
    /// `requiredExtendedKeyUsage` (e.g. "1.0.18013.5.1.2", mdoc document signing) is checked on
    /// the leaf after OpenSSL's validation: OpenSSL only knows its built-in purposes, and
    /// registering a new one (X509_PURPOSE_add) would change process-wide state.
    /// Safe to call from many threads at once on the same certificates.
    @discardableResult
    public static func verifyChain(
        leaf: Certificate, intermediates: [Certificate] = [], roots: [Certificate], at time: Int64,
        crls: [CertificateRevocationList] = [], requiredExtendedKeyUsage: String? = nil, strict: Bool = true
    ) throws(CertificateError) -> [Certificate] {
        guard !roots.isEmpty else { throw CertificateError(.untrustedIssuer, "no trust anchors") }
        guard let store = X509_STORE_new() else { throw CertificateError(.validationFailed(-1), "out of memory") }
        defer { X509_STORE_free(store) }
        for root in roots where X509_STORE_add_cert(store, root.x509) != 1 {
            OpenSSLErrors.clear(); throw CertificateError(.validationFailed(-1), "cannot add trust anchor")
        }
        guard let untrusted = OPENSSL_sk_new_null() else { throw CertificateError(.validationFailed(-1), "out of memory") }
        defer { OPENSSL_sk_free(untrusted) } // the stack borrows the certificates
        for certificate in intermediates {
            _ = OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.x509))
        }
        guard let crlStack = OPENSSL_sk_new_null() else { throw CertificateError(.validationFailed(-1), "out of memory") }
        defer { OPENSSL_sk_free(crlStack) }
        for crl in crls {
            _ = OPENSSL_sk_push(crlStack, UnsafeRawPointer(crl.crl))
        }

        guard let ctx = X509_STORE_CTX_new() else { throw CertificateError(.validationFailed(-1), "out of memory") }
        defer { X509_STORE_CTX_free(ctx) }
        guard X509_STORE_CTX_init(ctx, store, leaf.x509, untrusted) == 1 else {
            OpenSSLErrors.clear(); throw CertificateError(.validationFailed(-1), "cannot initialise validation")
        }
        X509_STORE_CTX_set_time(ctx, 0, time_t(time))
        // X509_STRICT adds RFC 5280 encoding checks (e.g. a CA needs keyUsage and a subject key
        // identifier, serials must be positive) that a conformance tool should not let slide;
        // `strict: false` is for third-party chains known to bend them (some device attestations).
        var flags: UInt = strict ? UInt(X509_V_FLAG_X509_STRICT) : 0
        if !crls.isEmpty {
            X509_STORE_CTX_set0_crls(ctx, crlStack)
            flags |= UInt(X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL)
        }
        X509_STORE_CTX_set_flags(ctx, flags)

        guard X509_verify_cert(ctx) == 1 else {
            let code = X509_STORE_CTX_get_error(ctx)
            let depth = Int(X509_STORE_CTX_get_error_depth(ctx))
            let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
            OpenSSLErrors.clear()
            throw CertificateError(Self.validationCode(code), reason, depth: depth)
        }
        // The path holds the very X509 objects passed in, so it maps back to the caller's values.
        let known = [leaf] + intermediates + roots
        var path: [Certificate] = []
        if let chain = X509_STORE_CTX_get0_chain(ctx) {
            for index in 0..<OPENSSL_sk_num(chain) {
                guard let raw = OPENSSL_sk_value(chain, index),
                      let certificate = known.first(where: { UnsafeMutableRawPointer($0.x509) == raw })
                else { continue }
                path.append(certificate)
            }
        }
        if let required = requiredExtendedKeyUsage, !(leaf.extendedKeyUsage ?? []).contains(required) {
            throw CertificateError(.missingExtendedKeyUsage, "leaf lacks extendedKeyUsage \(required)", depth: 0)
        }
        return path
    }

    private static func validationCode(_ code: Int32) -> CertificateError.Code {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CRL_HAS_EXPIRED: return .expired
        case X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_CRL_NOT_YET_VALID: return .notYetValid
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
             X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
             X509_V_ERR_CERT_UNTRUSTED, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return .untrustedIssuer
        case X509_V_ERR_CERT_SIGNATURE_FAILURE, X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE,
             X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY:
            return .invalidSignature
        case X509_V_ERR_INVALID_CA, X509_V_ERR_KEYUSAGE_NO_CERTSIGN: return .invalidCA
        case X509_V_ERR_PATH_LENGTH_EXCEEDED: return .pathLengthExceeded
        case X509_V_ERR_CERT_REVOKED: return .revoked
        case X509_V_ERR_UNABLE_TO_GET_CRL, X509_V_ERR_CRL_SIGNATURE_FAILURE, X509_V_ERR_KEYUSAGE_NO_CRL_SIGN,
             X509_V_ERR_UNABLE_TO_GET_CRL_ISSUER, X509_V_ERR_DIFFERENT_CRL_SCOPE:
            return .crlProblem
        default: return .validationFailed(code)
        }
    }
}

/// The `x5c` parameter of JOSE (RFC 7515 §4.1.6) and the x5chain of COSE carry a chain as DER
/// certificates, leaf first; JOSE base64-encodes each (standard alphabet, with padding, not
/// base64url).
extension Certificate {
    public static func x5c(_ chain: [Certificate]) -> [String] {
        chain.map { Base64.encode($0.der) }
    }

    public static func chain(x5c: [String]) throws(CertificateError) -> [Certificate] {
        guard !x5c.isEmpty else { throw CertificateError(.invalidEncoding, "empty x5c") }
        return try x5c.map { entry throws(CertificateError) in
            guard let der = Base64.decode(entry) else { throw CertificateError(.invalidEncoding, "x5c entry is not base64") }
            return try Certificate(der: der)
        }
    }
}

/// Standard base64 (RFC 4648 §4) through OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock. Decoding is
/// strict: only the alphabet, length a multiple of 4, padding only at the end.
enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String {
        guard !bytes.isEmpty else { return "" }
        var out = [UInt8](repeating: 0, count: (bytes.count + 2) / 3 * 4 + 1)
        let length = EVP_EncodeBlock(&out, bytes, Int32(bytes.count))
        return String(decoding: out.prefix(Int(length)), as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard !input.isEmpty, input.count % 4 == 0 else { return nil }
        let padding = input.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        guard padding <= 2 else { return nil }
        let isAlphabet: (UInt8) -> Bool = {
            (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) || $0 == 43 || $0 == 47
        }
        guard input.dropLast(padding).allSatisfy(isAlphabet) else { return nil }
        var out = [UInt8](repeating: 0, count: input.count / 4 * 3)
        // EVP_DecodeBlock counts padding as zero bytes; they are dropped below.
        let length = EVP_DecodeBlock(&out, input, Int32(input.count))
        guard length >= 0, Int(length) == out.count else { OpenSSLErrors.clear(); return nil }
        return Array(out.prefix(out.count - padding))
    }
}
