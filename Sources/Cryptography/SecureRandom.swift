import COpenSSL

/// Bytes from OpenSSL's CSPRNG.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        // Without entropy every nonce, key and code would be predictable; stopping is the only
        // safe answer, and callers should not each have to handle it.
        guard RAND_bytes(&out, Int32(count)) == 1 else { fatalError("RAND_bytes failed: no entropy") }
        return out
    }
}
