import COpenSSL

/// SHA-2 digests (thumbprints, at_hash-style claims, SD-JWT disclosures).
public enum Digest {
    public static func sha256(_ d: [UInt8]) -> [UInt8] { digest(d, sha256MD, 32) }
    public static func sha384(_ d: [UInt8]) -> [UInt8] { digest(d, sha384MD, 48) }
    public static func sha512(_ d: [UInt8]) -> [UInt8] { digest(d, sha512MD, 64) }

    // Fetched once. Handed `EVP_sha256()`, OpenSSL 3 fetches the implementation again on every
    // call: 1.7% of the PID Provider's CPU went to EVP_MD_fetch, mostly from disclosure digests.
    // A fetched EVP_MD is immutable and may be shared by threads (OpenSSL's crypto(7), "Algorithm
    // fetching"), which is why the unchecked constants below are safe.
    nonisolated(unsafe) private static let sha256MD = fetch("SHA256")
    nonisolated(unsafe) private static let sha384MD = fetch("SHA384")
    nonisolated(unsafe) private static let sha512MD = fetch("SHA512")

    /// The digest ECDSA pairs with each curve in JOSE (RFC 7518 §3.4: ES256, ES384, ES512).
    static func md(for curve: EllipticCurve) -> OpaquePointer {
        switch curve {
        case .p256: return sha256MD
        case .p384: return sha384MD
        case .p521: return sha512MD
        }
    }

    private static func fetch(_ name: String) -> OpaquePointer {
        guard let md = EVP_MD_fetch(nil, name, nil) else { fatalError("OpenSSL has no \(name)") }
        return md
    }

    private static func digest(_ data: [UInt8], _ md: OpaquePointer, _ size: Int) -> [UInt8] {
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
