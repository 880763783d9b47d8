import COpenSSL

/// A public key held as an EVP_PKEY (always a provider key: OpenSSL 3.0's ECDH and signature
/// operations take it as it is). Immutable after init, so concurrent verify() is safe.
public final class PublicKey: @unchecked Sendable {
    let pkey: OpaquePointer
    let kind: KeyKind
    public let components: PublicKeyComponents

    /// Takes ownership of `pkey`, freeing it if the key is not one JOSE can use.
    init(adopting pkey: OpaquePointer) throws(CryptoError) {
        do {
            let kind = try KeyKind(pkey: pkey)
            self.components = try KeyComponentsExport.components(of: pkey, kind: kind)
            self.kind = kind
            self.pkey = pkey
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
    }

    private init(pkey: OpaquePointer, kind: KeyKind, components: PublicKeyComponents) {
        self.pkey = pkey
        self.kind = kind
        self.components = components
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Rejects points off the curve, wrong-length coordinates and unsupported curves.
    public convenience init(components: PublicKeyComponents) throws(CryptoError) {
        let pkey = try KeyComponentsImport.pkey(from: components)
        switch components {
        // The import checked the curve and the coordinates' exact length, so the numbers given
        // are already the canonical ones and are not exported again (every proof and DPoP key
        // arrives as a JWK; measured: see docs/performance.md).
        case .ec(let curveName, _, _):
            guard let curve = EllipticCurve(joseName: curveName) else { EVP_PKEY_free(pkey); throw .invalidKey("unsupported curve") }
            self.init(pkey: pkey, kind: .ec(curve), components: components)
        case .okp:
            self.init(pkey: pkey, kind: .ed25519, components: components)
        // RSA numbers may arrive with leading zeros; the export gives the minimal form.
        case .rsa:
            try self.init(adopting: pkey)
        }
    }

    /// SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----").
    public convenience init(pem: String) throws(CryptoError) {
        let pkey = try PEMCodec.readPublicKey(pem)
        if EVP_PKEY_is_a(pkey, "EC") == 1 {
            // PEM keys skip the component import path, so check the point here too.
            guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { EVP_PKEY_free(pkey); throw .invalidPEM }
            defer { EVP_PKEY_CTX_free(ctx) }
            guard EVP_PKEY_public_check_quick(ctx) == 1 else {
                OpenSSLErrors.clear(); EVP_PKEY_free(pkey); throw .invalidKey("point is not on the curve")
            }
        }
        try self.init(adopting: pkey)
    }

    public func pem() throws(CryptoError) -> String { try PEMCodec.writePublicKey(pkey) }

    /// Whether this key's type, curve and size are right for `algorithm`.
    public func fits(_ algorithm: SignatureAlgorithm) -> Bool { kind.fits(algorithm) }

    /// True only for a valid JWS-encoded signature made with `algorithm` by a key that fits it.
    /// Malformed input of any kind yields false, never a crash.
    public func verify(signature: [UInt8], data: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        guard fits(algorithm) else { return false }
        return EVPSignature.verify(signature, data: data, with: pkey, kind: kind, algorithm: algorithm)
    }
}

extension PublicKey: Equatable {
    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.components == rhs.components }
}
