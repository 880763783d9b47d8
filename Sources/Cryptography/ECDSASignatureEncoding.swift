import COpenSSL

/// JWS carries ECDSA signatures as fixed-length r||s (RFC 7518 §3.4); OpenSSL speaks DER.
enum ECDSASignatureEncoding {
    static func raw(fromDER der: [UInt8], coordinateSize: Int) -> [UInt8]? {
        let sig: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let sig else { OpenSSLErrors.clear(); return nil }
        defer { ECDSA_SIG_free(sig) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(sig, &r, &s)
        guard let r, let s else { return nil }
        var out = [UInt8](repeating: 0, count: 2 * coordinateSize)
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(r, buffer.baseAddress, Int32(coordinateSize)) == Int32(coordinateSize)
                && BN_bn2binpad(s, buffer.baseAddress! + coordinateSize, Int32(coordinateSize)) == Int32(coordinateSize)
        }
        return ok ? out : nil
    }

    /// nil unless `raw` is exactly 2 × coordinate size: a DER or truncated signature is invalid.
    static func der(fromRaw raw: [UInt8], coordinateSize: Int) -> [UInt8]? {
        guard raw.count == 2 * coordinateSize else { return nil }
        guard let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(coordinateSize), nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + coordinateSize, Int32(coordinateSize), nil) }
        guard let r, let s, ECDSA_SIG_set0(sig, r, s) == 1 else {
            if let r { BN_free(r) }
            if let s { BN_free(s) }
            return nil
        }
        // One encoding pass into a buffer of the largest size (asking i2d for the length first
        // encodes the whole signature twice): a SEQUENCE of two INTEGERs of at most
        // coordinateSize + 1 bytes each (a leading zero), every length field one byte except the
        // SEQUENCE's, which is at most two (P-521: 138 bytes of content).
        var out = [UInt8](repeating: 0, count: 2 * coordinateSize + 9)
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &cursor)
        }
        guard written > 0, Int(written) <= out.count else { OpenSSLErrors.clear(); return nil }
        out.removeSubrange(Int(written)...)
        return out
    }
}
