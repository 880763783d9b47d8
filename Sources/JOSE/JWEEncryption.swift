import Support
import Cryptography
import JSON

extension JWE {
    /// Header members this library sets itself; `extraHeader` may not supply them. `zip` and
    /// `crit` are refused too: compression is not supported, and no extension is understood.
    static let reservedHeaders: Set<String> = ["alg", "enc", "epk", "apu", "apv", "kid", "zip", "crit"]

    /// Encrypts `plaintext` to `recipient` (an EC P-256/384/521 public JWK) with ECDH-ES and
    /// `encryption`: a fresh ephemeral key per message in `epk`, Concat KDF with the `enc`
    /// value as AlgorithmID (RFC 7518 §4.6.2), a random 96-bit IV. `kid` defaults to the
    /// recipient's kid; `apu`/`apv` are set only when given. Extra header members such as
    /// `typ` or `cty` are copied.
    public static func encrypt(
        _ plaintext: [UInt8], to recipient: JWK, encryption: JWEContentEncryption,
        agreementPartyUInfo apu: [UInt8]? = nil, agreementPartyVInfo apv: [UInt8]? = nil,
        keyID: String? = nil, extraHeader: [String: JSONValue] = [:]
    ) throws(JWEError) -> String {
        if let name = extraHeader.keys.first(where: reservedHeaders.contains) { throw .unsupportedHeader(name) }
        if let use = recipient.json["use"]?.stringValue, use != "enc" { throw .invalidKey("recipient key has use \"\(use)\"") }
        if let alg = recipient.algorithm, alg != ecdhES { throw .invalidKey("recipient key is for alg \"\(alg)\"") }
        guard recipient.kty == "EC", let curve = recipient.json["crv"]?.stringValue else {
            throw .invalidKey("ECDH-ES needs an EC recipient key")
        }
        let recipientKey: PublicKey
        do { recipientKey = try recipient.publicKey() } catch { throw .invalidKey("\(error)") }

        let ephemeral: PrivateKey
        do { ephemeral = try PrivateKey(generatingECCurve: curve) } catch { throw .invalidKey("\(error)") }
        let contentKey = try agreedKey(
            ours: ephemeral, theirs: recipientKey, encryption: encryption, apu: apu ?? [], apv: apv ?? [])

        var header = extraHeader
        header["alg"] = .string(ecdhES)
        header["enc"] = .string(encryption.rawValue)
        // Only the public members: JWK(publicKey:) adds kid/use, which an epk does not need.
        var epk = JWK(publicKey: ephemeral.publicKey, use: nil).json
        epk["kid"] = nil
        header["epk"] = .object(epk)
        if let apu { header["apu"] = .string(Base64URL.encode(apu)) }
        if let apv { header["apv"] = .string(Base64URL.encode(apv)) }
        if let kid = keyID ?? recipient.kid { header["kid"] = .string(kid) }

        let protectedHeader = Base64URL.encode(JSONValue.object(header).bytes)
        let iv = SecureRandom.bytes(AESGCM.nonceSize)
        let box: AESGCM.SealedBox
        do {
            box = try AESGCM.seal(plaintext, key: contentKey, nonce: iv, authenticating: Array(protectedHeader.utf8))
        } catch { throw .invalidKey("\(error)") }
        // The JWE Encrypted Key is empty for direct key agreement (RFC 7518 §4.6).
        return [protectedHeader, "", Base64URL.encode(iv), Base64URL.encode(box.ciphertext), Base64URL.encode(box.tag)]
            .joined(separator: ".")
    }

    /// Decrypts with our private key. Checks, in order: alg is ECDH-ES; enc is in `allowed`;
    /// no `zip`, no `crit`; empty encrypted key; apu/apv are base64url when present; epk is an
    /// EC public JWK on our key's curve whose point is on the curve; 96-bit IV and 128-bit tag;
    /// then the tag. Returns the plaintext.
    public func decrypt(
        with key: PrivateKey, allowed: Set<JWEContentEncryption> = Set(JWEContentEncryption.allCases)
    ) throws(JWEError) -> [UInt8] {
        guard let algValue = header["alg"] else { throw .malformed("missing alg header") }
        guard let alg = algValue.stringValue else { throw .malformed("alg must be a string") }
        guard alg == Self.ecdhES else { throw .unsupportedAlgorithm(alg) }
        guard let encValue = header["enc"] else { throw .malformed("missing enc header") }
        guard let encName = encValue.stringValue else { throw .malformed("enc must be a string") }
        guard let enc = JWEContentEncryption(rawValue: encName), allowed.contains(enc) else {
            throw .unsupportedEncryption(encName)
        }
        if header["zip"] != nil { throw .unsupportedHeader("zip") }
        if header["crit"] != nil { throw .unsupportedHeader("crit") }
        guard encryptedKey.isEmpty else { throw .malformed("ECDH-ES requires an empty encrypted key") }
        let apu = try partyInfo("apu"), apv = try partyInfo("apv")

        guard let ourCurve = key.ecCurve else { throw .invalidKey("ECDH-ES needs an EC private key") }
        let epk = try ephemeralKey(expectedCurve: ourCurve)
        guard initializationVector.count == AESGCM.nonceSize else { throw .malformed("IV must be 96 bits") }
        guard tag.count == AESGCM.tagSize else { throw .malformed("authentication tag must be 128 bits") }

        let contentKey = try Self.agreedKey(ours: key, theirs: epk, encryption: enc, apu: apu, apv: apv)
        do {
            return try AESGCM.open(.init(ciphertext: ciphertext, tag: tag), key: contentKey, nonce: initializationVector,
                                   authenticating: additionalAuthenticatedData)
        } catch {
            throw .decryptionFailed
        }
    }

    /// The content encryption key of ECDH-ES direct agreement (RFC 7518 §4.6.2): Concat KDF
    /// over Z with AlgorithmID = the `enc` value, PartyUInfo = apu, PartyVInfo = apv and
    /// SuppPubInfo = the key length in bits.
    public static func contentKey(
        sharedSecret: [UInt8], encryption: JWEContentEncryption, apu: [UInt8] = [], apv: [UInt8] = []
    ) throws(JWEError) -> [UInt8] {
        let otherInfo = KeyDerivation.concatOtherInfo(
            algorithmID: Array(encryption.rawValue.utf8), partyUInfo: apu, partyVInfo: apv, keyBits: encryption.keyLength * 8)
        do {
            return try KeyDerivation.concatKDF(sharedSecret: sharedSecret, otherInfo: otherInfo, outputLength: encryption.keyLength)
        } catch { throw .invalidKey("\(error)") }
    }

    private static func agreedKey(
        ours: PrivateKey, theirs: PublicKey, encryption: JWEContentEncryption, apu: [UInt8], apv: [UInt8]
    ) throws(JWEError) -> [UInt8] {
        let z: [UInt8]
        do { z = try ours.sharedSecret(with: theirs) } catch { throw .invalidEphemeralKey("key agreement failed") }
        return try contentKey(sharedSecret: z, encryption: encryption, apu: apu, apv: apv)
    }

    private func partyInfo(_ name: String) throws(JWEError) -> [UInt8] {
        guard let value = header[name] else { return [] }
        guard let text = value.stringValue, let bytes = Base64URL.decode(text) else {
            throw .malformed("\(name) must be a base64url string")
        }
        return bytes
    }

    private func ephemeralKey(expectedCurve: String) throws(JWEError) -> PublicKey {
        guard let value = header["epk"] else { throw .invalidEphemeralKey("missing epk header") }
        guard let object = value.objectValue else { throw .invalidEphemeralKey("epk must be a JSON object") }
        let jwk: JWK
        do { jwk = try JWK(json: object) } catch { throw .invalidEphemeralKey("\(error)") }
        guard jwk.kty == "EC" else { throw .invalidEphemeralKey("epk must be an EC key") }
        guard object["crv"]?.stringValue == expectedCurve else {
            throw .invalidEphemeralKey("epk is not on \(expectedCurve)")
        }
        do { return try jwk.publicKey() } catch { throw .invalidEphemeralKey("\(error)") }
    }
}
