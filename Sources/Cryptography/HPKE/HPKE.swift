/// Hybrid Public Key Encryption (RFC 9180) in base mode with the one suite Apple's identity
/// envelope (`APPLE-HPKE-v1`) and ISO/IEC 18013-7 use: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256 and
/// AES-128-GCM. OpenSSL 3.0 has no HPKE API (it arrived in 3.2), so this composes OpenSSL's ECDH
/// (`PrivateKey.sharedSecret`), HKDF (`KeyDerivation`) and AES-GCM (`AESGCM`) exactly as §4-§5
/// describe; no primitive is written here.
public enum HPKE {
    /// RFC 9180 §7: the identifiers of the suite.
    public static let kemID: UInt16 = 0x0010
    public static let kdfID: UInt16 = 0x0001
    public static let aeadID: UInt16 = 0x0001
    /// Nk, Nn, Nt of AES-128-GCM and Nenc, Npk, Nsecret of DHKEM(P-256) (§7.1, §7.3).
    static let keySize = 16
    static let nonceSize = 12
    public static let tagSize = 16
    public static let encapsulatedKeySize = 65
    static let secretSize = 32

    /// §5: only mode_base (0x00) is implemented; PSK and Auth modes are not part of any envelope here.
    public static let modeBase: UInt8 = 0x00

    /// §5.1: "HPKE" || I2OSP(kem_id, 2) || I2OSP(kdf_id, 2) || I2OSP(aead_id, 2).
    static let suiteID: [UInt8] = Array("HPKE".utf8) + i2osp(kemID) + i2osp(kdfID) + i2osp(aeadID)
    /// §4.1: "KEM" || I2OSP(kem_id, 2), the suite_id inside the KEM.
    static let kemSuiteID: [UInt8] = Array("KEM".utf8) + i2osp(kemID)

    /// Single-shot seal (§6.1): a fresh ephemeral key, then one encryption at sequence number 0.
    /// Returns `enc` (the ephemeral public key, 65 bytes) and `ciphertext || tag`.
    public static func seal(
        _ plaintext: [UInt8], to recipient: PublicKey, info: [UInt8], aad: [UInt8] = []
    ) throws(CipherError) -> (enc: [UInt8], ciphertext: [UInt8]) {
        var (enc, context) = try setupBaseSender(recipient: recipient, info: info)
        return (enc, try context.seal(plaintext, aad: aad))
    }

    /// Single-shot open (§6.1). Any failure of the tag, `enc`, `info` or `aad` is refused without
    /// releasing plaintext.
    public static func open(
        _ ciphertext: [UInt8], enc: [UInt8], recipient: PrivateKey, info: [UInt8], aad: [UInt8] = []
    ) throws(CipherError) -> [UInt8] {
        var context = try setupBaseRecipient(enc: enc, recipient: recipient, info: info)
        return try context.open(ciphertext, aad: aad)
    }

    /// SetupBaseS (§5.1.1). `ephemeral` is for published test vectors only: a sender must use a
    /// fresh key for every message.
    public static func setupBaseSender(
        recipient: PublicKey, info: [UInt8], ephemeral: PrivateKey? = nil
    ) throws(CipherError) -> (enc: [UInt8], context: Context) {
        let (sharedSecret, enc) = try DHKEM.encapsulate(to: recipient, ephemeral: ephemeral)
        return (enc, try keySchedule(sharedSecret: sharedSecret, info: info))
    }

    /// SetupBaseR (§5.1.1).
    public static func setupBaseRecipient(enc: [UInt8], recipient: PrivateKey, info: [UInt8]) throws(CipherError) -> Context {
        let sharedSecret = try DHKEM.decapsulate(enc: enc, recipient: recipient)
        return try keySchedule(sharedSecret: sharedSecret, info: info)
    }

    /// KeySchedule (§5.1) for mode_base: empty psk and psk_id.
    static func keySchedule(sharedSecret: [UInt8], info: [UInt8]) throws(CipherError) -> Context {
        let pskIDHash = try labeledExtract(salt: [], label: "psk_id_hash", ikm: [], suiteID: suiteID)
        let infoHash = try labeledExtract(salt: [], label: "info_hash", ikm: info, suiteID: suiteID)
        let context = [modeBase] + pskIDHash + infoHash
        let secret = try labeledExtract(salt: sharedSecret, label: "secret", ikm: [], suiteID: suiteID)
        return Context(
            key: try labeledExpand(prk: secret, label: "key", info: context, length: keySize, suiteID: suiteID),
            baseNonce: try labeledExpand(prk: secret, label: "base_nonce", info: context, length: nonceSize, suiteID: suiteID),
            exporterSecret: try labeledExpand(prk: secret, label: "exp", info: context, length: secretSize, suiteID: suiteID))
    }

    /// An encryption context (§5.2): the AEAD key, the base nonce and the sequence number both
    /// sides advance with every message, so nonces never repeat under the key.
    public struct Context: Sendable {
        public let key: [UInt8]
        public let baseNonce: [UInt8]
        public let exporterSecret: [UInt8]
        public private(set) var sequenceNumber: UInt64 = 0

        init(key: [UInt8], baseNonce: [UInt8], exporterSecret: [UInt8]) {
            self.key = key
            self.baseNonce = baseNonce
            self.exporterSecret = exporterSecret
        }

        /// ContextS.Seal: `ciphertext || tag`.
        public mutating func seal(_ plaintext: [UInt8], aad: [UInt8] = []) throws(CipherError) -> [UInt8] {
            let box = try AESGCM.seal(plaintext, key: key, nonce: try nextNonce(), authenticating: aad)
            sequenceNumber += 1
            return box.ciphertext + box.tag
        }

        /// ContextR.Open; the sequence number advances only when the message opened (§5.2).
        public mutating func open(_ ciphertext: [UInt8], aad: [UInt8] = []) throws(CipherError) -> [UInt8] {
            guard ciphertext.count >= HPKE.tagSize else { throw .invalidTagLength(ciphertext.count) }
            let box = AESGCM.SealedBox(ciphertext: Array(ciphertext.dropLast(HPKE.tagSize)),
                                       tag: Array(ciphertext.suffix(HPKE.tagSize)))
            let plaintext = try AESGCM.open(box, key: key, nonce: try nextNonce(), authenticating: aad)
            sequenceNumber += 1
            return plaintext
        }

        /// Secret export (§5.3): LabeledExpand(exporter_secret, "sec", exporter_context, L).
        public func export(context: [UInt8], length: Int) throws(CipherError) -> [UInt8] {
            try HPKE.labeledExpand(prk: exporterSecret, label: "sec", info: context, length: length, suiteID: HPKE.suiteID)
        }

        /// ComputeNonce (§5.2): base_nonce XOR I2OSP(seq, Nn). A 64-bit counter is far below
        /// the 2^96 - 1 limit; it is refused at its own end rather than wrapping.
        private func nextNonce() throws(CipherError) -> [UInt8] {
            guard sequenceNumber < UInt64.max else { throw .internalFailure("HPKE sequence number overflow") }
            var nonce = baseNonce
            for index in 0..<8 {
                nonce[HPKE.nonceSize - 1 - index] ^= UInt8(truncatingIfNeeded: sequenceNumber >> (8 * UInt64(index)))
            }
            return nonce
        }
    }

    /// §4: LabeledExtract(salt, label, ikm) = Extract(salt, "HPKE-v1" || suite_id || label || ikm).
    static func labeledExtract(salt: [UInt8], label: String, ikm: [UInt8], suiteID: [UInt8]) throws(CipherError) -> [UInt8] {
        try KeyDerivation.hkdfExtract(inputKeyMaterial: Array("HPKE-v1".utf8) + suiteID + Array(label.utf8) + ikm, salt: salt)
    }

    /// §4: LabeledExpand(prk, label, info, L) = Expand(prk, I2OSP(L, 2) || "HPKE-v1" || suite_id
    /// || label || info, L).
    static func labeledExpand(prk: [UInt8], label: String, info: [UInt8], length: Int, suiteID: [UInt8]) throws(CipherError) -> [UInt8] {
        guard length > 0, length <= 255 * 32 else { throw .derivationFailed("HPKE output length \(length)") }
        let labeledInfo = i2osp(UInt16(length)) + Array("HPKE-v1".utf8) + suiteID + Array(label.utf8) + info
        return try KeyDerivation.hkdfExpand(pseudorandomKey: prk, info: labeledInfo, outputLength: length)
    }

    static func i2osp(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(truncatingIfNeeded: value)] }
}
