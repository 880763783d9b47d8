import CBOR
import COSE
import Cryptography
import JSON
import MDoc

/// An mdoc credential the test wallet file keeps (`wallet receive` stores each credential with
/// its holder key as a private JWK): the IssuerSigned and the device key its MSO names, ready to
/// be presented as a DeviceResponse.
public struct StoredMDoc {
    public let issuerSigned: IssuerSigned
    public let docType: String
    let deviceKey: PrivateKey

    /// The first `mso_mdoc` credential of the wallet file, the EUDI PID (`eu.europa.ec.eudi.pid.1`)
    /// preferred; `docType` picks another.
    public static func first(in wallet: TestWalletFile, docType wanted: String? = nil) throws -> StoredMDoc {
        var found: [StoredMDoc] = []
        for entry in wallet.credentials {
            guard let object = entry.objectValue, object["format"]?.stringValue == "mso_mdoc" else { continue }
            guard let text = object["credential"]?.stringValue, let jwk = object["holder_key"]?.objectValue else {
                throw WalletError.usage("\(wallet.path): an mso_mdoc credential without its credential or holder_key")
            }
            let issuerSigned = try IssuerSigned(base64URL: text)
            let mso = try issuerSigned.unverifiedMobileSecurityObject()
            found.append(StoredMDoc(issuerSigned: issuerSigned, docType: mso.docType, deviceKey: try HolderKey(privateJWK: jwk).privateKey))
        }
        let wantedType = wanted ?? EUDIPID.docType
        if let match = found.first(where: { $0.docType == wantedType }) { return match }
        if wanted == nil, let any = found.first { return any }
        throw WalletError.usage("\(wallet.path) holds no mso_mdoc credential" + (wanted.map { " of docType \($0)" } ?? "")
                                + " (receive one with `trustbed wallet receive ... --format mso_mdoc --wallet FILE`)")
    }

    /// `--elements` values: `nameSpace/element` or a bare element of the docType's own nameSpace
    /// (the PID's is its docType); empty selects every element the credential holds.
    public func selection(_ elements: [String]) -> [String: Set<String>]? {
        guard !elements.isEmpty else { return nil }
        var out: [String: Set<String>] = [:]
        for element in elements.flatMap({ $0.split(separator: ",").map(String.init) }) where !element.isEmpty {
            if let slash = element.lastIndex(of: "/") {
                out[String(element[..<slash]), default: []].insert(String(element[element.index(after: slash)...]))
            } else {
                out[docType, default: []].insert(element)
            }
        }
        return out
    }

    /// A DeviceResponse with the selected elements, device-signed over `sessionTranscript`.
    public func present(elements: [String: Set<String>]?, sessionTranscript: SessionTranscript) throws -> DeviceResponse {
        try DeviceResponse.present(issuerSigned, elements: elements, deviceKey: deviceKey, sessionTranscript: sessionTranscript)
    }
}

/// Apple's identity envelope as an iPhone's PassKit would make it (Verify with Wallet), so a
/// relying-party team can test its server end to end: the mdoc's DeviceResponse under
/// `{"identity": ...}`, device-signed over the Apple SessionTranscript, HPKE-sealed (RFC 9180 base
/// mode, P-256/HKDF-SHA256/AES-128-GCM) to the merchant's encryption certificate with
/// `info` = the SessionTranscript bytes, in the `APPLE-HPKE-v1` envelope.
public enum AppleEnvelopeMaker {
    public static let algorithm = "APPLE-HPKE-v1"

    /// `pkRHash` is the SHA-256 of the uncompressed point 0x04||X||Y of the recipient key, as the
    /// verifiers of Apple's sample files hash it.
    public static func make(
        mdoc: StoredMDoc, elements: [String: Set<String>]?, recipient: PublicKey, nonce: [UInt8], merchantID: String,
        teamID: String
    ) throws -> [UInt8] {
        guard let point = recipient.uncompressedPoint, recipient.components.curve == "P-256" else {
            throw WalletError.usage("the recipient certificate's key must be EC P-256 (HPKE DHKEM(P-256))")
        }
        guard !nonce.isEmpty else { throw WalletError.usage("--nonce must not be empty") }
        let pkRHash = Digest.sha256(point)
        let transcript = SessionTranscript.appleIdentityPresentment(nonce: nonce, merchantID: merchantID, teamID: teamID, pkRHash: pkRHash)
        let response = try mdoc.present(elements: elements, sessionTranscript: transcript)
        let plaintext = CBORValue.map([CBORMapEntry("identity", response.cborValue)]).encoded()
        let sealed = try HPKE.seal(plaintext, to: recipient, info: transcript.bytes)
        let envelope: CBORValue = [
            "algorithm": .text(algorithm),
            "params": ["mode": 0, "pkEm": .bytes(sealed.enc), "pkRHash": .bytes(pkRHash),
                       "infoHash": .bytes(Digest.sha256(transcript.bytes))],
            "data": .bytes(sealed.ciphertext),
        ]
        return envelope.encoded()
    }
}

extension PublicKeyComponents {
    fileprivate var curve: String? {
        if case .ec(let curve, _, _) = self { return curve }
        return nil
    }
}
