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
    /// Works on the UTF-8 bytes and decodes with OpenSSL's base64 rather than with
    /// `String.range(of:)`, a `Character` filter and `Data(base64Encoded:)`: a server hosting a
    /// large federation reads a key PEM on most cold resolves (measured: see docs/performance.md).
    static func pkcs8DER(_ pem: String) -> [UInt8]? {
        var pem = pem
        return pem.withUTF8 { bytes -> [UInt8]? in
            guard let begin = find(pkcs8Begin, in: bytes, from: 0),
                  let end = find(pkcs8End, in: bytes, from: begin + pkcs8Begin.count) else { return nil }
            var body: [UInt8] = []
            body.reserveCapacity(end - begin)
            for b in bytes[(begin + pkcs8Begin.count) ..< end] {
                switch b {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
                case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                     UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="): body.append(b)
                default: return nil
                }
            }
            return base64Decode(body)
        }
    }

    private static let pkcs8Begin = Array("-----BEGIN PRIVATE KEY-----".utf8)
    private static let pkcs8End = Array("-----END PRIVATE KEY-----".utf8)

    private static func find(_ needle: [UInt8], in haystack: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard needle.count <= haystack.count, start <= haystack.count - needle.count else { return nil }
        var i = start
        while i <= haystack.count - needle.count {
            if haystack[i] == needle[0] {
                var j = 1
                while j < needle.count && haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }

    /// Standard base64 with padding (RFC 4648 §4), whitespace already removed.
    private static func base64Decode(_ text: [UInt8]) -> [UInt8]? {
        guard !text.isEmpty, text.count % 4 == 0, text.count < Int(Int32.max) else { return nil }
        let padding = text.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        guard padding <= 2, !text.dropLast(padding).contains(UInt8(ascii: "=")) else { return nil }
        var out = [UInt8](repeating: 0, count: text.count / 4 * 3)
        // EVP_DecodeBlock decodes whole groups, counting the bytes that padding stands for too.
        let n = EVP_DecodeBlock(&out, text, Int32(text.count))
        guard n == Int32(out.count) else { OpenSSLErrors.clear(); return nil }
        out.removeLast(padding)
        return out
    }

    /// PKCS#8 DER through a reused decoder context. Setting one up makes OpenSSL 3.0 search every
    /// decoder it has, the dominant cost of a key load (measured: see docs/performance.md); a
    /// context decodes any number of keys, so a few are kept and lent out. Keys are tried as
    /// EC first: a context for any key type also runs the SM2 decoder on every EC key, which
    /// builds the curve group (the costly part of a decode) a second time.
    private static func decodePKCS8(_ der: [UInt8]) -> OpaquePointer? {
        if let key = PKCS8Decoder.decode(der, keyType: .ec) { return key }
        return PKCS8Decoder.decode(der, keyType: .any)
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

/// An OpenSSL decoder context for PKCS#8 DER private keys of one key type (or any), bound to its
/// own output slot; one thread uses it at a time (it is taken from and returned to its pool).
private final class PKCS8Decoder: @unchecked Sendable {
    enum KeyType: CaseIterable {
        case ec, any
        var name: String? { self == .ec ? "EC" : nil }
    }

    private static let pools: [KeyType: Locked<[PKCS8Decoder]>] = Dictionary(uniqueKeysWithValues: KeyType.allCases.map { ($0, Locked([])) })
    /// EVP_PKEY_KEYPAIR, built from macros Swift cannot import.
    private static let keyPair = Int32(OSSL_KEYMGMT_SELECT_ALL_PARAMETERS | OSSL_KEYMGMT_SELECT_PRIVATE_KEY | OSSL_KEYMGMT_SELECT_PUBLIC_KEY)
    private let ctx: OpaquePointer
    private let slot: UnsafeMutablePointer<OpaquePointer?>

    private init?(keyType: KeyType) {
        slot = .allocate(capacity: 1)
        slot.initialize(to: nil)
        guard let ctx = OSSL_DECODER_CTX_new_for_pkey(slot, "DER", "PrivateKeyInfo", keyType.name, Self.keyPair, nil, nil) else {
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

    /// The key, or nil when it is not of `keyType` (or not a key at all).
    static func decode(_ der: [UInt8], keyType: KeyType) -> OpaquePointer? {
        guard let pool = pools[keyType],
              let decoder = pool.withLock({ $0.popLast() }) ?? PKCS8Decoder(keyType: keyType) else { return nil }
        let key = decoder.decode(der)
        pool.withLock { if $0.count < 8 { $0.append(decoder) } }
        return key
    }

    /// The key, moved out of the slot so the next decode starts empty.
    private func decode(_ der: [UInt8]) -> OpaquePointer? {
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
