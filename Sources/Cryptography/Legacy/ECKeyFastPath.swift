import COpenSSL
import COpenSSLLegacy

/// THE EC_KEY FAST PATH: EC keys held as legacy `EC_KEY`s and used through ECDSA_do_sign and
/// ECDSA_do_verify, OpenSSL APIs deprecated since 3.0. The deprecated calls themselves are made
/// in the `COpenSSLLegacy` C target (`trustbed_legacy_ec_key.c`), so Swift never imports a
/// deprecated function; this file is the only Swift code that uses that target.
///
/// Why: every OpenSSL 3.0 way to make an EC key from its numbers (the decoders,
/// EVP_PKEY_fromdata, duplicating a per-curve provider key) builds the curve group again, and
/// every EVP signature or verification sets up a provider context; an `EC_KEY` copies a group
/// built once per process (`SharedGroup`), and ECDSA_do_sign/ECDSA_do_verify are what the
/// provider runs in the end. Both hot paths make short-lived keys: every key proof, DPoP proof
/// and federation JWKS key arrives as a JWK and verifies once or a few times, and a server
/// hosting a large federation loads a leaf's PEM key on most cold resolves to sign with it
/// (measured: see docs/performance.md, "Cryptography").
///
/// Where it applies: `PrivateKey(pem:)` for a PKCS#8 EC key of the shape `PKCS8ECKey` reads,
/// and `PublicKey(components:)` for every EC JWK. Such a key keeps its `EC_KEY` (`legacyEC`) and
/// `ECDSASigner.sign` / `PublicKey.verify` go through this file for it; an EVP_PKEY_CTX over it
/// would export it to the provider, which builds the group again. Keys generated, read from a
/// public-key PEM or from a certificate take the EVP path, and so does any other EVP use of a
/// legacy key (ECDH with it as the peer, a certificate for it, its PEM): OpenSSL exports it then.
///
/// What keeps it correct: it makes the checks the EVP path makes (EC_KEY_oct2key refuses a point
/// off the curve; a signature is exactly r || s of the coordinate size, RFC 7518 §3.4, with r and
/// s in [1, n-1]). `ECDSAVerificationTests` (the differential test) runs valid, tampered and
/// edge-case signatures (r or s zero or n, high s, wrong lengths, other curves) through this path
/// and through EVP_DigestVerify and requires the same verdict; `PKCS8ECKeyTests` compares the
/// keys with OpenSSL's decoder and signs from many threads (an `EC_KEY` is only read).
///
/// How to remove it: delete this file, the `COpenSSLLegacy` target and the `legacyEC` members of
/// `PublicKey`, `PrivateKey` and `ECDSASigner`. Then `PrivateKey(pem:)` reads EC keys with
/// OpenSSL's decoder (`PEMCodec.readPrivateKey`) like every other key, `KeyComponentsImport`
/// builds EC public keys with EVP_PKEY_fromdata (group name and encoded public point) like RSA
/// and Ed25519, and `ECDSASigner` / `EVPSignature` sign and verify with EVP_PKEY_sign and
/// EVP_DigestVerify, which they already do for every other key. The differential test's cases
/// stay as tests of that path. Check `make bench` (issuance and cold resolves) before and after.
enum ECKeyFastPath {
    /// The key pair as a legacy `EC_KEY` (on a copy of the curve's shared group) inside an
    /// EVP_PKEY, both owned by the caller through the EVP_PKEY; nil if OpenSSL refuses it (a
    /// point off the curve). The point is not recomputed from the scalar, as with the decoder.
    static func privateKey(curve: EllipticCurve, scalar: [UInt8], point: [UInt8]) -> (pkey: OpaquePointer, ecKey: OpaquePointer)? {
        var ec: OpaquePointer?
        guard let pkey = trustbed_legacy_ec_pkey(SharedGroup.of(curve).group, scalar, scalar.count, point, point.count, &ec),
              let ec
        else { OpenSSLErrors.clear(); return nil }
        return (pkey, ec)
    }

    /// A public-only legacy `EC_KEY` on a copy of the curve's shared group, with `point` (SEC 1
    /// uncompressed) decoded by EC_KEY_oct2key, which refuses a point off the curve; inside an
    /// EVP_PKEY that owns it. Returns both.
    static func publicKey(curve: EllipticCurve, point: [UInt8]) throws(CryptoError) -> (pkey: OpaquePointer, ecKey: OpaquePointer) {
        var ec: OpaquePointer?
        guard let pkey = trustbed_legacy_ec_public_pkey(SharedGroup.of(curve).group, point, point.count, &ec), let ec
        else { OpenSSLErrors.clear(); throw .invalidKey("EC public key rejected") }
        return (pkey, ec)
    }

    /// The JWS signature (RFC 7518 §3.4, r || s) of a digest made with the curve's digest:
    /// ECDSA_do_sign, which is what the provider's EVP_PKEY_sign runs (ECDSA_sign_ex calls
    /// ECDSA_do_sign_ex). The `EC_KEY` is only read, so threads may sign with it at once.
    static func sign(hash: [UInt8], length: Int, with ec: OpaquePointer, coordinateSize: Int) throws(CryptoError) -> [UInt8] {
        guard let sig = trustbed_legacy_ecdsa_sign(hash, Int32(length), ec) else { OpenSSLErrors.clear(); throw .signingFailed }
        defer { ECDSA_SIG_free(sig) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(sig, &r, &s)
        var raw = [UInt8](repeating: 0, count: 2 * coordinateSize)
        let size = Int32(coordinateSize)
        let written = raw.withUnsafeMutableBufferPointer { out -> Bool in
            guard let base = out.baseAddress else { return false }
            return BN_bn2binpad(r, base, size) == size && BN_bn2binpad(s, base + coordinateSize, size) == size
        }
        guard written else { throw .signingFailed }
        return raw
    }

    /// Verification of a JWS/COSE signature (r || s): the digest with the curve's once-fetched
    /// EVP_MD, then ECDSA_do_verify, which is what EVP_DigestVerify runs in the end for an EC key.
    /// The same signatures pass and fail: r and s must each be exactly the coordinate size
    /// (RFC 7518 §3.4) and lie in [1, n-1], which ECDSA_do_verify checks.
    static func verify(_ signature: [UInt8], data: [UInt8], with ec: OpaquePointer, curve: EllipticCurve) -> Bool {
        let size = curve.coordinateSize
        guard signature.count == 2 * size else { return false }
        let md = Digest.md(for: curve)
        var hash = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var hashLength: UInt32 = 0
        guard EVP_Digest(data, data.count, &hash, &hashLength, md, nil) == 1 else { OpenSSLErrors.clear(); return false }
        let result = trustbed_legacy_ecdsa_verify(hash, Int32(hashLength), signature, Int32(size), ec)
        if result != 1 { OpenSSLErrors.clear() }
        return result == 1
    }

    /// Each curve's group, built once per process and never freed; only read (EC_KEY_set_group
    /// copies it), so it is shared by every thread.
    final class SharedGroup: @unchecked Sendable {
        let group: OpaquePointer

        private init(nid: Int32) {
            guard let group = EC_GROUP_new_by_curve_name(nid) else { fatalError("OpenSSL lacks curve \(nid)") }
            self.group = group
        }

        private static let p256 = SharedGroup(nid: NID_X9_62_prime256v1)
        private static let p384 = SharedGroup(nid: NID_secp384r1)
        private static let p521 = SharedGroup(nid: NID_secp521r1)

        static func of(_ curve: EllipticCurve) -> SharedGroup {
            switch curve {
            case .p256: return p256
            case .p384: return p384
            case .p521: return p521
            }
        }
    }
}

extension PKCS8ECKey {
    /// This key pair on the fast path (see `ECKeyFastPath.privateKey`).
    func makeKey() -> (pkey: OpaquePointer, ecKey: OpaquePointer)? {
        ECKeyFastPath.privateKey(curve: curve, scalar: privateScalar, point: publicPoint)
    }
}
