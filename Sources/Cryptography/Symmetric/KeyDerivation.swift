import COpenSSL

/// Key derivation through OpenSSL's EVP_KDF: HKDF (RFC 5869) for HPKE and key schedules, and
/// the Concat KDF that JWE ECDH-ES uses (RFC 7518 §4.6.2, NIST SP 800-56A §5.8.1), which is
/// OpenSSL's "SSKDF" (the single-step KDF of SP 800-56C with a hash): Hash(counter || Z ||
/// OtherInfo) per block.
public enum KeyDerivation {
    public enum HashFunction: Sendable {
        case sha256, sha384, sha512

        var openSSLName: StaticString {
            switch self {
            case .sha256: return "SHA256"
            case .sha384: return "SHA384"
            case .sha512: return "SHA512"
            }
        }

        /// HashLen of RFC 5869: the output size in bytes.
        public var size: Int {
            switch self {
            case .sha256: return 32
            case .sha384: return 48
            case .sha512: return 64
            }
        }
    }

    /// HKDF-Extract-then-Expand. An empty salt means "not provided", which RFC 5869 §2.2
    /// defines as HashLen zero bytes; OpenSSL applies that default when the salt is omitted.
    public static func hkdf(
        _ hash: HashFunction = .sha256, inputKeyMaterial ikm: [UInt8], salt: [UInt8] = [], info: [UInt8] = [],
        outputLength: Int
    ) throws(CipherError) -> [UInt8] {
        guard !ikm.isEmpty else { throw .derivationFailed("HKDF needs input key material") }
        var parameters: [(StaticString, [UInt8])] = [("key", ikm)]
        if !salt.isEmpty { parameters.append(("salt", salt)) }
        if !info.isEmpty { parameters.append(("info", info)) }
        return try derive("HKDF", hash: hash, octets: parameters, outputLength: outputLength)
    }

    /// HKDF-Extract alone (RFC 5869 §2.2): the pseudorandom key, HashLen bytes. HPKE (RFC 9180
    /// §4) labels its Extract and Expand inputs separately, so it needs the two halves apart.
    public static func hkdfExtract(
        _ hash: HashFunction = .sha256, inputKeyMaterial ikm: [UInt8], salt: [UInt8] = []
    ) throws(CipherError) -> [UInt8] {
        guard !ikm.isEmpty else { throw .derivationFailed("HKDF needs input key material") }
        var parameters: [(StaticString, [UInt8])] = [("key", ikm)]
        if !salt.isEmpty { parameters.append(("salt", salt)) }
        return try derive("HKDF", hash: hash, mode: "EXTRACT_ONLY", octets: parameters, outputLength: hash.size)
    }

    /// HKDF-Expand alone (RFC 5869 §2.3) from a pseudorandom key of at least HashLen bytes.
    public static func hkdfExpand(
        _ hash: HashFunction = .sha256, pseudorandomKey prk: [UInt8], info: [UInt8] = [], outputLength: Int
    ) throws(CipherError) -> [UInt8] {
        guard prk.count >= hash.size else { throw .derivationFailed("HKDF-Expand needs a PRK of at least \(hash.size) bytes") }
        var parameters: [(StaticString, [UInt8])] = [("key", prk)]
        if !info.isEmpty { parameters.append(("info", info)) }
        return try derive("HKDF", hash: hash, mode: "EXPAND_ONLY", octets: parameters, outputLength: outputLength)
    }

    /// RFC 7518 §4.6.2 Concat KDF. `otherInfo` is AlgorithmID || PartyUInfo || PartyVInfo ||
    /// SuppPubInfo, already length-prefixed (see `concatOtherInfo`).
    public static func concatKDF(
        _ hash: HashFunction = .sha256, sharedSecret z: [UInt8], otherInfo: [UInt8], outputLength: Int
    ) throws(CipherError) -> [UInt8] {
        guard !z.isEmpty else { throw .derivationFailed("Concat KDF needs a shared secret") }
        return try derive("SSKDF", hash: hash, octets: [("key", z), ("info", otherInfo)], outputLength: outputLength)
    }

    /// OtherInfo of RFC 7518 §4.6.2: each of AlgorithmID, PartyUInfo and PartyVInfo as a 32-bit
    /// big-endian length followed by the bytes; SuppPubInfo is the key length in bits as 32-bit
    /// big-endian; SuppPrivInfo is empty.
    public static func concatOtherInfo(algorithmID: [UInt8], partyUInfo: [UInt8], partyVInfo: [UInt8], keyBits: Int) -> [UInt8] {
        func lengthPrefixed(_ data: [UInt8]) -> [UInt8] { bigEndian32(data.count) + data }
        return lengthPrefixed(algorithmID) + lengthPrefixed(partyUInfo) + lengthPrefixed(partyVInfo) + bigEndian32(keyBits)
    }

    private static func bigEndian32(_ value: Int) -> [UInt8] {
        let v = UInt32(truncatingIfNeeded: value)
        return [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }

    /// Runs one EVP_KDF. OSSL_PARAM keeps pointers to names and values until the derive call, so
    /// names are static strings and values are copied into buffers that outlive it.
    private static func derive(
        _ name: StaticString, hash: HashFunction, mode: StaticString? = nil, octets: [(StaticString, [UInt8])],
        outputLength: Int
    ) throws(CipherError) -> [UInt8] {
        guard outputLength > 0, outputLength <= 255 * 64 else { throw .derivationFailed("output length \(outputLength)") }
        guard let kdf = EVP_KDF_fetch(nil, cString(name), nil) else {
            OpenSSLErrors.clear(); throw .internalFailure("\(name) not available")
        }
        defer { EVP_KDF_free(kdf) }
        guard let ctx = EVP_KDF_CTX_new(kdf) else { throw .internalFailure("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(ctx) }

        let buffers = octets.map { pair -> UnsafeMutableBufferPointer<UInt8> in
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(pair.1.count, 1))
            _ = buffer.initialize(from: pair.1)
            return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        let digestName = hash.openSSLName
        var params: [OSSL_PARAM] = [
            OSSL_PARAM_construct_utf8_string(
                cString("digest"), UnsafeMutableRawPointer(mutating: digestName.utf8Start).assumingMemoryBound(to: CChar.self),
                0),
        ]
        if let mode {
            // OSSL_KDF_PARAM_MODE: HKDF's "EXTRACT_ONLY" / "EXPAND_ONLY" instead of both steps.
            params.append(OSSL_PARAM_construct_utf8_string(
                cString("mode"), UnsafeMutableRawPointer(mutating: mode.utf8Start).assumingMemoryBound(to: CChar.self), 0))
        }
        for (index, pair) in octets.enumerated() {
            params.append(OSSL_PARAM_construct_octet_string(cString(pair.0), buffers[index].baseAddress, pair.1.count))
        }
        params.append(OSSL_PARAM_construct_end())

        var out = [UInt8](repeating: 0, count: outputLength)
        guard EVP_KDF_derive(ctx, &out, outputLength, params) == 1 else {
            OpenSSLErrors.clear(); throw .derivationFailed("\(name) derive failed")
        }
        return out
    }

    private static func cString(_ s: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
