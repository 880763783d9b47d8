import COpenSSL

/// AES in Galois/Counter Mode (NIST SP 800-38D) through EVP: the content encryption of JWE
/// (RFC 7518 §5.3) and of HPKE. Always a 96-bit IV and a 128-bit tag, the only sizes those
/// specifications use.
public enum AESGCM {
    public static let nonceSize = 12
    public static let tagSize = 16

    public struct SealedBox: Equatable, Sendable {
        public let ciphertext: [UInt8]
        public let tag: [UInt8]
        public init(ciphertext: [UInt8], tag: [UInt8]) {
            self.ciphertext = ciphertext
            self.tag = tag
        }
    }

    /// Encrypts with a 16-, 24- or 32-byte key. The nonce must never repeat under one key;
    /// `SecureRandom.bytes(AESGCM.nonceSize)` is the usual choice.
    public static func seal(
        _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CipherError) -> SealedBox {
        let ctx = try context(key: key, nonce: nonce, encrypting: true)
        defer { EVP_CIPHER_CTX_free(ctx) }
        try addAAD(aad, ctx)
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var written: Int32 = 0
        if !plaintext.isEmpty {
            guard EVP_EncryptUpdate(ctx, &out, &written, plaintext, Int32(plaintext.count)) == 1 else {
                OpenSSLErrors.clear(); throw .internalFailure("EVP_EncryptUpdate")
            }
        }
        var final: Int32 = 0
        let finished = out.withUnsafeMutableBufferPointer { EVP_EncryptFinal_ex(ctx, $0.baseAddress! + Int(written), &final) }
        guard finished == 1 else { OpenSSLErrors.clear(); throw .internalFailure("EVP_EncryptFinal_ex") }
        var tag = [UInt8](repeating: 0, count: tagSize)
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), &tag) == 1 else {
            OpenSSLErrors.clear(); throw .internalFailure("EVP_CTRL_GCM_GET_TAG")
        }
        return SealedBox(ciphertext: Array(out.prefix(Int(written + final))), tag: tag)
    }

    /// Decrypts and verifies; any mismatch (key, nonce, AAD, ciphertext or tag) is
    /// `.authenticationFailed`, and no plaintext is released.
    public static func open(
        _ box: SealedBox, key: [UInt8], nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CipherError) -> [UInt8] {
        guard box.tag.count == tagSize else { throw .invalidTagLength(box.tag.count) }
        let ctx = try context(key: key, nonce: nonce, encrypting: false)
        defer { EVP_CIPHER_CTX_free(ctx) }
        try addAAD(aad, ctx)
        var out = [UInt8](repeating: 0, count: box.ciphertext.count + 16)
        var written: Int32 = 0
        if !box.ciphertext.isEmpty {
            guard EVP_DecryptUpdate(ctx, &out, &written, box.ciphertext, Int32(box.ciphertext.count)) == 1 else {
                OpenSSLErrors.clear(); throw .authenticationFailed
            }
        }
        var tag = box.tag
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag) == 1 else {
            OpenSSLErrors.clear(); throw .internalFailure("EVP_CTRL_GCM_SET_TAG")
        }
        var final: Int32 = 0
        let verified = out.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(ctx, $0.baseAddress! + Int(written), &final) }
        guard verified == 1 else { OpenSSLErrors.clear(); throw .authenticationFailed }
        return Array(out.prefix(Int(written + final)))
    }

    private static func context(key: [UInt8], nonce: [UInt8], encrypting: Bool) throws(CipherError) -> OpaquePointer {
        let cipher: OpaquePointer?
        switch key.count {
        case 16: cipher = EVP_aes_128_gcm()
        case 24: cipher = EVP_aes_192_gcm()
        case 32: cipher = EVP_aes_256_gcm()
        default: throw .invalidKeyLength(key.count)
        }
        guard nonce.count == nonceSize else { throw .invalidNonceLength(nonce.count) }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .internalFailure("EVP_CIPHER_CTX_new") }
        // 12 bytes is GCM's default IV length in OpenSSL, so no EVP_CTRL_GCM_SET_IVLEN is needed.
        let ok = encrypting
            ? EVP_EncryptInit_ex(ctx, cipher, nil, key, nonce)
            : EVP_DecryptInit_ex(ctx, cipher, nil, key, nonce)
        guard ok == 1 else {
            OpenSSLErrors.clear(); EVP_CIPHER_CTX_free(ctx); throw .internalFailure("cipher init")
        }
        return ctx
    }

    private static func addAAD(_ aad: [UInt8], _ ctx: OpaquePointer) throws(CipherError) {
        guard !aad.isEmpty else { return }
        var ignored: Int32 = 0
        guard EVP_CipherUpdate(ctx, nil, &ignored, aad, Int32(aad.count)) == 1 else {
            OpenSSLErrors.clear(); throw .internalFailure("AAD")
        }
    }
}
