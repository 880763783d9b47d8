extension HPKE {
    /// DHKEM(P-256, HKDF-SHA256) (RFC 9180 §4.1, §7.1): the ECDH shared secret of an ephemeral key
    /// and the recipient's key, bound to both public keys through ExtractAndExpand.
    enum DHKEM {
        /// Encap(pkR): a fresh ephemeral key unless a test vector supplies one.
        static func encapsulate(to recipient: PublicKey, ephemeral: PrivateKey?) throws(CipherError) -> (sharedSecret: [UInt8], enc: [UInt8]) {
            let recipientBytes = try serialize(recipient)
            let ephemeralKey: PrivateKey
            if let ephemeral {
                ephemeralKey = ephemeral
            } else {
                do { ephemeralKey = try PrivateKey(generatingECCurve: "P-256") } catch {
                    throw .internalFailure("ephemeral key generation: \(error)")
                }
            }
            let dh = try ephemeralKey.sharedSecret(with: recipient)
            let enc = try serialize(ephemeralKey.publicKey)
            return (try extractAndExpand(dh: dh, kemContext: enc + recipientBytes), enc)
        }

        /// Decap(enc, skR): `enc` must be an uncompressed P-256 point on the curve.
        static func decapsulate(enc: [UInt8], recipient: PrivateKey) throws(CipherError) -> [UInt8] {
            let ephemeral = try deserialize(enc)
            let dh = try recipient.sharedSecret(with: ephemeral)
            return try extractAndExpand(dh: dh, kemContext: enc + (try serialize(recipient.publicKey)))
        }

        /// SerializePublicKey (§7.1.1): the uncompressed point 0x04 || X || Y of SEC 1 §2.3.3.
        static func serialize(_ key: PublicKey) throws(CipherError) -> [UInt8] {
            guard case .ec(let curve, let x, let y) = key.components, curve == "P-256" else {
                throw .keyAgreementFailed("DHKEM(P-256) needs a P-256 key")
            }
            return [0x04] + x + y
        }

        /// DeserializePublicKey (§7.1.1): 65 bytes, 0x04 first; the import checks the point is on
        /// the curve (§7.1.4 validation), so a truncated or forged `enc` is refused here.
        static func deserialize(_ enc: [UInt8]) throws(CipherError) -> PublicKey {
            guard enc.count == HPKE.encapsulatedKeySize, enc[0] == 0x04 else {
                throw .keyAgreementFailed("enc must be an uncompressed P-256 point (65 bytes, 0x04 first), got \(enc.count) bytes")
            }
            do {
                return try PublicKey(components: .ec(curve: "P-256", x: Array(enc[1...32]), y: Array(enc[33...64])))
            } catch {
                throw .keyAgreementFailed("enc is not a point on P-256")
            }
        }

        /// ExtractAndExpand (§4.1) with Nsecret = 32.
        private static func extractAndExpand(dh: [UInt8], kemContext: [UInt8]) throws(CipherError) -> [UInt8] {
            let prk = try HPKE.labeledExtract(salt: [], label: "eae_prk", ikm: dh, suiteID: HPKE.kemSuiteID)
            return try HPKE.labeledExpand(prk: prk, label: "shared_secret", info: kemContext, length: HPKE.secretSize,
                                          suiteID: HPKE.kemSuiteID)
        }
    }
}
