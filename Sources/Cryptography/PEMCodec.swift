import Foundation
import COpenSSL
import Support

/// PEM through memory BIOs. Reading never prompts: encrypted keys are refused, because
/// OpenSSL's default passphrase callback would otherwise block on the terminal.
enum PEMCodec {
    /// PKCS#8 or traditional ("EC PRIVATE KEY", "RSA PRIVATE KEY") private key.
    static func readPrivateKey(_ pem: String) throws(CryptoError) -> OpaquePointer {
        if let der = pkcs8DER(pem), let key = decodePKCS8(der) { return key }
        let key = withReadBIO(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil) }
        guard let key else { OpenSSLErrors.clear(); throw .invalidPEM }
        return key
    }

    /// The DER inside a lone unencrypted PKCS#8 PEM ("PRIVATE KEY"), or nil for anything else.
    private static func pkcs8DER(_ pem: String) -> [UInt8]? {
        let begin = "-----BEGIN PRIVATE KEY-----", end = "-----END PRIVATE KEY-----"
        guard let b = pem.range(of: begin), let e = pem.range(of: end, range: b.upperBound..<pem.endIndex) else { return nil }
        let body = pem[b.upperBound..<e.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(body)).map { Array($0) }
    }

    /// PKCS#8 DER through a reused decoder context. Setting one up lets OpenSSL 3.0 search every
    /// decoder it has, which cost more than a third of a cold resolve (perf, 20,000 entities);
    /// a context decodes any number of keys, so a few are kept and lent out.
    private static func decodePKCS8(_ der: [UInt8]) -> OpaquePointer? {
        guard let decoder = PKCS8Decoder.pool.withLock({ $0.popLast() }) ?? PKCS8Decoder() else { return nil }
        let key = decoder.decode(der)
        PKCS8Decoder.pool.withLock { if $0.count < 8 { $0.append(decoder) } }
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

/// An OpenSSL decoder context for PKCS#8 DER private keys, bound to its own output slot; one
/// thread uses it at a time (it is taken from and returned to `pool`).
private final class PKCS8Decoder: @unchecked Sendable {
    static let pool = Locked<[PKCS8Decoder]>([])
    /// EVP_PKEY_KEYPAIR, built from macros Swift cannot import.
    private static let keyPair = Int32(OSSL_KEYMGMT_SELECT_ALL_PARAMETERS | OSSL_KEYMGMT_SELECT_PRIVATE_KEY | OSSL_KEYMGMT_SELECT_PUBLIC_KEY)
    private let ctx: OpaquePointer
    private let slot: UnsafeMutablePointer<OpaquePointer?>

    init?() {
        slot = .allocate(capacity: 1)
        slot.initialize(to: nil)
        guard let ctx = OSSL_DECODER_CTX_new_for_pkey(slot, "DER", "PrivateKeyInfo", nil, Self.keyPair, nil, nil) else {
            OpenSSLErrors.clear()
            slot.deallocate()
            return nil
        }
        self.ctx = ctx
    }

    deinit {
        OSSL_DECODER_CTX_free(ctx)
        if let left = slot.pointee { EVP_PKEY_free(left) }
        slot.deallocate()
    }

    /// The key, moved out of the slot so the next decode starts empty.
    func decode(_ der: [UInt8]) -> OpaquePointer? {
        var left = der.count
        let ok = der.withUnsafeBufferPointer { buffer -> Bool in
            var cursor = buffer.baseAddress
            return OSSL_DECODER_from_data(ctx, &cursor, &left) == 1
        }
        let key = slot.pointee
        slot.pointee = nil
        guard ok, let key else {
            OpenSSLErrors.clear()
            if let key { EVP_PKEY_free(key) }
            return nil
        }
        return key
    }
}
