import COpenSSL

/// SHA-2 digests (thumbprints, at_hash-style claims, SD-JWT disclosures).
public enum Digest {
    public static func sha256(_ d: [UInt8]) -> [UInt8] { digest(d, EVP_sha256(), 32) }
    public static func sha384(_ d: [UInt8]) -> [UInt8] { digest(d, EVP_sha384(), 48) }
    public static func sha512(_ d: [UInt8]) -> [UInt8] { digest(d, EVP_sha512(), 64) }

    private static func digest(_ data: [UInt8], _ md: OpaquePointer?, _ size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        // A built-in SHA-2 failing means the library itself is broken; continuing would
        // produce wrong digests silently.
        guard EVP_Digest(data, data.count, &out, &length, md, nil) == 1, Int(length) == size else {
            fatalError("OpenSSL SHA-2 digest failed")
        }
        return out
    }
}
