import COpenSSL

/// PEM through memory BIOs. Reading never prompts: encrypted keys are refused, because
/// OpenSSL's default passphrase callback would otherwise block on the terminal.
enum PEMCodec {
    /// PKCS#8 or traditional ("EC PRIVATE KEY", "RSA PRIVATE KEY") private key.
    static func readPrivateKey(_ pem: String) throws(CryptoError) -> OpaquePointer {
        let key = withReadBIO(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil) }
        guard let key else { OpenSSLErrors.clear(); throw .invalidPEM }
        return key
    }

    /// SubjectPublicKeyInfo ("PUBLIC KEY").
    static func readPublicKey(_ pem: String) throws(CryptoError) -> OpaquePointer {
        let key = withReadBIO(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, { _, _, _, _ in 0 }, nil) }
        guard let key else { OpenSSLErrors.clear(); throw .invalidPEM }
        return key
    }

    /// Unencrypted PKCS#8 ("PRIVATE KEY"): OpenSSL 3 writes PrivateKeyInfo for every key type.
    static func writePrivateKey(_ pkey: OpaquePointer) throws(CryptoError) -> String {
        try withWriteBIO { bio in PEM_write_bio_PrivateKey(bio, pkey, nil, nil, 0, nil, nil) == 1 }
    }

    static func writePublicKey(_ pkey: OpaquePointer) throws(CryptoError) -> String {
        try withWriteBIO { bio in PEM_write_bio_PUBKEY(bio, pkey) == 1 }
    }

    private static func withReadBIO(_ pem: String, _ body: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, bytes.count < Int(Int32.max) else { return nil }
        return bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    private static func withWriteBIO(_ body: (OpaquePointer) -> Bool) throws(CryptoError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .invalidPEM }
        defer { BIO_free(bio) }
        guard body(bio) else { OpenSSLErrors.clear(); throw .invalidPEM }
        var data: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data)
        guard length > 0, let data else { throw .invalidPEM }
        let buffer = UnsafeRawBufferPointer(start: data, count: length)
        return String(decoding: buffer, as: UTF8.self)
    }
}
