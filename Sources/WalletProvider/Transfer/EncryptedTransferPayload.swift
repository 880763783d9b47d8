import JOSE

/// The wallet the source sends (`send_wallet_payload`'s `encrypted_payload`): a compact JWE
/// (RFC 7516 §7.1) encrypted with ECDH-ES (RFC 7518 §4.6) and A256GCM to the public key the
/// destination showed in its QR code. The provider stores and forwards it and never decrypts
/// it (it has no key to), so all it checks is that it is what the destination will expect:
/// five base64url parts, a protected header naming those algorithms with an ephemeral key,
/// and at most 1 MiB.
public enum EncryptedTransferPayload {
    /// 1 MiB: a test wallet's credentials are a few kilobytes; the bound keeps one session
    /// from filling the database.
    public static let maximumLength = 1024 * 1024

    public static func validate(_ payload: String) throws(WalletProviderError) {
        guard payload.utf8.count <= maximumLength else {
            throw .badRequest("encrypted_payload is \(payload.utf8.count) bytes, more than the \(maximumLength) allowed")
        }
        let jwe: JWE
        do { jwe = try JWE.parse(payload) } catch {
            throw .badRequest("encrypted_payload is not a compact JWE: \(error)")
        }
        guard jwe.algorithm == JWE.ecdhES else {
            throw .badRequest("encrypted_payload's alg must be ECDH-ES, not \(jwe.algorithm ?? "missing")")
        }
        guard jwe.encryption == JWEContentEncryption.A256GCM.rawValue else {
            throw .badRequest("encrypted_payload's enc must be A256GCM, not \(jwe.encryption ?? "missing")")
        }
        // ECDH-ES needs the sender's ephemeral public key (RFC 7518 §4.6.1.1); without it the
        // destination could never decrypt, so refuse now rather than after the transfer.
        guard let epk = jwe.header["epk"]?.objectValue, (try? JWK(json: epk))?.kty == "EC" else {
            throw .badRequest("encrypted_payload's header has no valid epk (the ephemeral public key ECDH-ES needs)")
        }
        guard jwe.initializationVector.count == 12, jwe.tag.count == 16, jwe.encryptedKey.isEmpty else {
            throw .badRequest("encrypted_payload is not ECDH-ES + A256GCM: it needs an empty encrypted key, a 96-bit IV and a 128-bit tag")
        }
    }
}
