import Cryptography
import JOSE
import JSON
import Support

/// The development device key attestation format (issue 20, item 5a): what a device maker's
/// attestation says, as a JWT this provider's mock device maker signs, for emulators, tests and
/// the CLI wallet, which have no Android or Apple hardware to attest their keys.
///
/// Header: `typ: dev-key-attestation+jwt`, `alg: ES256`, `x5c` = [the device-maker root] (the
/// root signs directly: there is no per-device certificate to make). Claims: `cnf.jwk` (the
/// hardware public key), `hardware_key_tag`, `client_data_hash` (`ClientDataHash`), `device`
/// {`model`, `os`, `integrity`: `pass` | `fail`}, `iat`, `exp`.
public struct DevelopmentKeyAttestation: DeviceKeyAttestationVerifier {
    public static let type = "dev-key-attestation+jwt"
    /// How long a made attestation is good; the nonce it is bound to expires sooner anyway.
    public static let lifetime: Int64 = 600
    public static let model = "Trustbed Development Device"
    public static let os = "trustbed-dev"

    /// The device-maker roots an attestation's `x5c` must chain to (this provider's own).
    public let roots: [Certificate]
    public var format: DeviceKeyAttestationFormat { .dev }
    /// The `x5c` of every development attestation is the same root: validated once, not
    /// decoded again per registration (`ValidatedChainCache`, bounded by its limit).
    let chains = ValidatedChainCache()
    let rootsID: [UInt8]

    public init(roots: [Certificate]) {
        self.roots = roots
        rootsID = ValidatedChainCache.identity(of: roots)
    }

    /// A development key attestation for `hardwareKey`, bound to `binding`, signed by the
    /// device maker: what `POST <wp>/dev/key-attestation` answers.
    public static func make(hardwareKey: JWK, binding: KeyAttestationBinding, integrity: Bool, signer: PrivateKey,
                            root: Certificate, now: Int64) throws(WalletProviderError) -> String {
        let claims: [String: JSONValue] = [
            "cnf": ["jwk": hardwareKey.keyMembersOnly.jsonValue],
            "hardware_key_tag": .string(binding.hardwareKeyTag),
            "client_data_hash": .string(Base64URL.encode(binding.clientDataHash(jwkThumbprint: hardwareKey.thumbprint()))),
            "device": ["model": .string(model), "os": .string(os), "integrity": .string(integrity ? "pass" : "fail")],
            "iat": .int(now),
            "exp": .int(now + lifetime),
        ]
        do {
            return try JWS.sign(header: ["typ": .string(type), "x5c": .array(Certificate.x5c([root]).map(JSONValue.string))],
                                payloadBytes: JSONValue.object(claims).bytes, key: signer, algorithm: .ES256)
        } catch {
            throw WalletProviderError(.serverError, "the device maker could not sign", cause: "\(error)")
        }
    }

    public func verify(_ attestation: JSONValue, binding: KeyAttestationBinding, now: Int64) throws(WalletProviderError)
        -> VerifiedKeyAttestation {
        func refuse(_ why: String) -> WalletProviderError { .refused("development key attestation: \(why)") }
        guard let compact = attestation.stringValue else { throw refuse("expected a compact JWT") }
        let jws: JWS
        let claims: [String: JSONValue]
        do throws(JOSEError) {
            (jws, claims) = try JWS.parseClaims(compact)
        } catch {
            throw refuse("unreadable: \(error)")
        }
        // The signer: the x5c leaf, which must chain to the device-maker root.
        guard let entries = jws.header["x5c"]?.stringArray, !entries.isEmpty, entries.count <= 5 else {
            throw refuse("x5c must be an array of 1 to 5 base64 certificates")
        }
        let chain: ValidatedChainCache.Entry
        do throws(CertificateError) {
            chain = try chains.validate(x5c: entries, roots: roots, rootsID: rootsID, at: now, rootItself: true)
        } catch {
            throw refuse("x5c does not chain to the device-maker root: \(error.reason)")
        }
        var signerJWK = JWK(publicKey: chain.leafKey)
        if let kid = jws.keyID { signerJWK = signerJWK.adding(["kid": .string(kid)]) }
        do throws(JOSEError) {
            try jws.verify(keys: JWKSet(keys: [signerJWK]), allowList: [.ES256], expectedType: Self.type, requireKeyID: false)
        } catch {
            throw refuse("\(error)")
        }
        if let exp = claims["exp"] {
            guard let value = exp.intValue else { throw refuse("exp must be a number") }
            guard value > now else { throw refuse("expired") }
        }
        guard let jwkObject = claims["cnf"]?.objectValue?["jwk"]?.objectValue else { throw refuse("cnf.jwk missing") }
        let hardwareKey: JWK
        do throws(JOSEError) {
            hardwareKey = try JWK(json: jwkObject)
            guard hardwareKey.kty == "EC", hardwareKey.json["crv"]?.stringValue == "P-256" else {
                throw .invalidKey("the hardware key must be EC P-256")
            }
            _ = try hardwareKey.publicKey()
        } catch {
            throw refuse("cnf.jwk: \(error)")
        }
        guard claims["hardware_key_tag"]?.stringValue == binding.hardwareKeyTag else {
            throw refuse("hardware_key_tag is not the registration's")
        }
        let expected = Base64URL.encode(binding.clientDataHash(jwkThumbprint: hardwareKey.thumbprint()))
        guard let presented = claims["client_data_hash"]?.stringValue, ConstantTime.equal(Array(presented.utf8), Array(expected.utf8)) else {
            throw refuse("client_data_hash is not bound to this nonce, hardware_key_tag and key")
        }
        guard let device = claims["device"]?.objectValue, let model = device["model"]?.stringValue,
              let os = device["os"]?.stringValue, let integrity = device["integrity"]?.stringValue,
              integrity == "pass" || integrity == "fail" else {
            throw refuse("device must be {model, os, integrity: pass | fail}")
        }
        return VerifiedKeyAttestation(
            format: .dev, hardwareKey: hardwareKey.keyMembersOnly,
            device: DeviceFacts(model: model, os: os, securityLevel: .software, integrity: integrity == "pass"))
    }
}
