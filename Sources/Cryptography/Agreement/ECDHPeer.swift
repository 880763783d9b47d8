import COpenSSL

/// The peer of an ECDH as a provider key. A `PublicKey` made from a JWK or COSE key holds a
/// legacy `EC_KEY` (the EC_KEY fast path, Legacy/ECKeyFastPath.swift), and
/// `EVP_PKEY_derive_set_peer_ex` would export such a key to the provider, building the curve
/// group again from its name on every ECDH (every JWE a verifier decrypts: the `epk` is always a
/// JWK). A copy of a per-curve provider key given the point shares nothing with the template
/// and skips that rebuild (measured: see docs/performance.md, issue 22).
enum ECDHPeer {
    /// A provider EC key with no point, per curve; its group is built once. Never modified
    /// after it is made (only duplicated), so threads share it.
    private final class CurveTemplate: @unchecked Sendable {
        let key: OpaquePointer

        init(_ curve: EllipticCurve) throws(CryptoError) {
            key = try KeyComponentsImport.build(type: "EC", [.utf8("group", curve.joseName)],
                                                selection: Int32(OSSL_KEYMGMT_SELECT_ALL_PARAMETERS))
        }

        deinit { EVP_PKEY_free(key) }
    }

    private static let templates: [EllipticCurve: Result<CurveTemplate, CryptoError>] = Dictionary(
        uniqueKeysWithValues: EllipticCurve.allCases.map { curve in
            (curve, Result { () throws(CryptoError) in try CurveTemplate(curve) })
        })

    /// A new provider key (owned by the caller) on `curve` with `point` (SEC 1 uncompressed) as
    /// its public key. OpenSSL decodes the point with EC_POINT_oct2point, which refuses one off
    /// the curve, so this is the same check the point had when its `PublicKey` was made.
    static func providerKey(curve: EllipticCurve, point: [UInt8]) throws(CryptoError) -> OpaquePointer {
        guard let template = try templates[curve]?.get() else { throw .invalidKey("unsupported curve \(curve.joseName)") }
        guard let key = EVP_PKEY_dup(template.key) else { OpenSSLErrors.clear(); throw .invalidKey("out of memory") }
        guard EVP_PKEY_set1_encoded_public_key(key, point, point.count) == 1 else {
            OpenSSLErrors.clear(); EVP_PKEY_free(key); throw .invalidKey("EC public key rejected")
        }
        return key
    }

    /// `peer`'s EVP_PKEY for EVP_PKEY_derive_set_peer_ex: its own when it is a provider key
    /// (`owned` nil), else a provider copy of its point that the caller frees (`owned`).
    static func key(for peer: PublicKey, curve: EllipticCurve) throws(CryptoError) -> (pkey: OpaquePointer, owned: Bool) {
        guard peer.legacyEC != nil, case .ec(_, let x, let y) = peer.components else { return (peer.pkey, false) }
        return (try providerKey(curve: curve, point: [0x04] + x + y), true)
    }
}
