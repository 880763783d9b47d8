import COpenSSL

/// The one comparison for secrets and values derived from them (tokens, their digests, MACs,
/// PKCE challenges, tx_codes): OpenSSL's `CRYPTO_memcmp`, whose time depends on the length only,
/// never on where the first difference is, so response times reveal nothing about how much of
/// a guess matched. A compiler may turn a hand-written XOR loop back into an early exit;
/// OpenSSL's is written so it cannot.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes. Inputs of different lengths are unequal at once:
    /// the length is not the secret (compare digests when it could be).
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        let compared = a.withContiguousStorageIfAvailable { a in
            b.withContiguousStorageIfAvailable { b in CRYPTO_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
        if let compared, let result = compared { return result }
        let x = Array(a), y = Array(b)
        return x.withUnsafeBytes { x in y.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }

    /// The same over the strings' UTF-8 bytes.
    public static func equal(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { a in b.withUTF8 { b in equal(a, b) } }
    }
}
