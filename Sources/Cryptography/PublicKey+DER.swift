import COpenSSL

extension PublicKey {
    /// The DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7), e.g. to hash a recipient key whose
    /// encoding a protocol does not pin down (Apple's identity envelope `pkRHash`).
    public func derSubjectPublicKeyInfo() throws(CryptoError) -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(pkey, &buffer)
        guard length > 0, let buffer else { OpenSSLErrors.clear(); throw .invalidKey("cannot encode the public key") }
        defer { CRYPTO_free(buffer, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }

    /// The uncompressed EC point 0x04 || X || Y (SEC 1 §2.3.3); nil for other key types.
    public var uncompressedPoint: [UInt8]? {
        guard case .ec(_, let x, let y) = components else { return nil }
        return [0x04] + x + y
    }
}
