import Cryptography
import Foundation
import JSON
import Support

/// The CLI wallet's side of a Trustbed Wallet Provider (docs/wallet-provider.md): registration
/// with a development key attestation, wallet attestations in both wire formats, and key
/// attestations for credential keys (OpenID4VCI 1.0 Appendix D). `provider` is the entity ID,
/// which is also the provider's base URL.
public final class WalletProviderClient {
    public let provider: String
    let http: WalletHTTP

    /// Requests go through `http` (its `trace` logs them); their bodies never hold a private key
    /// (only public JWKs and signed JWTs).
    public init(provider: String, http: WalletHTTP) {
        self.provider = provider.hasSuffix("/") ? String(provider.dropLast()) : provider
        self.http = http
    }

    func send(_ method: String, _ path: String, headers: [String], body: [UInt8]?) throws -> WalletHTTP.Reply {
        try http.send(method, provider + path, headers: headers, body: body)
    }

    func postJSON(_ path: String, _ body: JSONValue, step: String) throws -> WalletHTTP.Reply {
        let reply = try send("POST", path, headers: ["Content-Type: application/json", "Accept: application/json"], body: body.bytes)
        guard (200..<300).contains(reply.status) else { throw WalletError.server(step: step, status: reply.status, body: reply.text) }
        return reply
    }

    /// `GET <wp>/nonce`.
    public func nonce() throws -> String {
        let reply = try send("GET", "/nonce", headers: ["Accept: application/json"], body: nil)
        guard reply.status == 200, let nonce = reply.json?["nonce"]?.stringValue, !nonce.isEmpty else {
            throw WalletError.server(step: "wallet provider nonce", status: reply.status, body: reply.text)
        }
        return nonce
    }

    /// `POST <wp>/dev/key-attestation`: the provider's development device maker attests the
    /// hardware key, bound to `nonce` and the tag through `client_data_hash`.
    public func developmentKeyAttestation(hardwareKey: HolderKey, tag: String, nonce: String, integrity: String) throws -> String {
        let reply = try postJSON("/dev/key-attestation", ["jwk": .object(hardwareKey.jwk), "hardware_key_tag": .string(tag),
                                                         "nonce": .string(nonce), "integrity": .string(integrity)],
                                 step: "development key attestation")
        guard let attestation = reply.json?["key_attestation"]?.stringValue else {
            throw WalletError.malformed("development key attestation: no key_attestation in \(reply.text)")
        }
        return attestation
    }

    /// Registration: nonce → development key attestation → `POST <wp>/wallet-instance` (204).
    /// `pinPublicKey` (issue 21): the PIN key's public JWK, which makes the account an NL one.
    public func register(hardwareKey: HolderKey, tag: String, integrity: String, pinPublicKey: [String: JSONValue]? = nil) throws {
        let nonce = try nonce()
        let attestation = try developmentKeyAttestation(hardwareKey: hardwareKey, tag: tag, nonce: nonce, integrity: integrity)
        try registerInstance(nonce: nonce, keyAttestation: attestation, tag: tag, pinPublicKey: pinPublicKey)
    }

    /// `POST <wp>/wallet-instance` with a nonce and key attestation already fetched (the load
    /// client times the three requests apart).
    public func registerInstance(nonce: String, keyAttestation: String, tag: String, pinPublicKey: [String: JSONValue]? = nil) throws {
        var body: [String: JSONValue] = ["challenge": .string(nonce), "key_attestation": .string(keyAttestation), "hardware_key_tag": .string(tag)]
        if let pinPublicKey { body["pin_public_key"] = .object(pinPublicKey) }
        _ = try postJSON("/wallet-instance", .object(body), step: "registration")
    }

    /// Registration with a device key attestation made here under the CLI's test roots
    /// (`TestDeviceAttestations`): `android` sends a Key Attestation chain whose challenge is the
    /// client data hash, `apple` an App Attest object whose clientDataHash it is (the tag then
    /// must be the App Attest key id). Nonce → `POST <wp>/wallet-instance` (204).
    public func register(hardwareKey: HolderKey, tag: String, format: String, testRoots: TestDeviceAttestations,
                         appleAppID: String = TestDeviceAttestations.defaultAppleAppID, pinPublicKey: [String: JSONValue]? = nil) throws {
        let nonce = try nonce()
        let hash = Digest.sha256(Array(("{\"nonce\":\(JSONValue.string(nonce).serialized()),\"hardware_key_tag\":"
            + "\(JSONValue.string(tag).serialized()),\"jwk_thumbprint\":\(JSONValue.string(hardwareKey.thumbprint).serialized())}").utf8))
        let attestation: JSONValue
        switch format {
        case "android":
            attestation = .array(try testRoots.androidChain(hardwareKey: hardwareKey.privateKey.publicKey, challenge: hash).map(JSONValue.string))
        case "apple":
            attestation = .string(try testRoots.appleAttestation(hardwareKey: hardwareKey.privateKey.publicKey, clientDataHash: hash,
                                                                 appID: appleAppID))
        default:
            throw WalletError.usage("no test device attestation of format \(format)")
        }
        var body: [String: JSONValue] = ["challenge": .string(nonce), "key_attestation": attestation, "hardware_key_tag": .string(tag)]
        if let pinPublicKey { body["pin_public_key"] = .object(pinPublicKey) }
        _ = try postJSON("/wallet-instance", .object(body), step: "registration")
    }

    /// The wallet attestation request (`war+jwt` for `/token`, `wp-war+jwt` for
    /// `/wallet-attestations`), signed by the new wallet key, with the hardware key's signature
    /// over `{"challenge", "jwk_thumbprint"}` and a fresh development key attestation.
    /// An instance registered with an Android or Apple attestation sends an `integrity_assertion`
    /// instead (what a phone sends: a Play Integrity token or an App Attest assertion; a test
    /// wallet has neither, and the provider stores it unchecked).
    func attestationRequest(type: String, hardwareKey: HolderKey, tag: String, walletKey: HolderKey, integrity: String,
                            deviceFormat: String = "dev") throws -> String {
        let nonce = try nonce()
        let keyAttestation = deviceFormat == "dev"
            ? try developmentKeyAttestation(hardwareKey: hardwareKey, tag: tag, nonce: nonce, integrity: integrity) : nil
        return try attestationRequest(type: type, nonce: nonce, keyAttestation: keyAttestation, hardwareKey: hardwareKey, tag: tag,
                                      walletKey: walletKey)
    }

    /// The same request JWT from a nonce and key attestation the caller fetched; without a key
    /// attestation it carries the test `integrity_assertion`.
    public func attestationRequest(type: String, nonce: String, keyAttestation: String?, hardwareKey: HolderKey, tag: String,
                                   walletKey: HolderKey) throws -> String {
        let thumbprint = walletKey.thumbprint
        // Member order as the provider rebuilds it (docs/wallet-provider.md, "The request JWT").
        let signed = "{\"challenge\":\(JSONValue.string(nonce).serialized()),\"jwk_thumbprint\":\(JSONValue.string(thumbprint).serialized())}"
        let now = WalletProofs.now()
        var claims: [String: JSONValue] = [
            "iss": .string("\(provider)/instance/\(thumbprint)"), "aud": .string(provider), "iat": .int(now),
            "exp": .int(now + 300), "challenge": .string(nonce), "hardware_key_tag": .string(tag),
            "hardware_signature": .string(Base64URL.encode(try hardwareKey.signature(Array(signed.utf8)))),
            "cnf": ["jwk": .object(walletKey.jwk)],
        ]
        if let keyAttestation {
            claims["key_attestation"] = .string(keyAttestation)
        } else {
            claims["integrity_assertion"] = .string(Self.testIntegrityAssertion)
        }
        return try walletKey.sign(header: ["typ": .string(type), "kid": .string(thumbprint)], claims: claims)
    }

    /// What the CLI sends as `integrity_assertion`: plainly not a Play Integrity token.
    public static let testIntegrityAssertion = "trustbed-cli-test-integrity-assertion"

    /// The wallet attestations by format: `POST <wp>/wallet-attestations` (`wp-war+jwt`), or with
    /// `legacy` the jwt-bearer grant at `POST <wp>/token` (`war+jwt`, answered with the JWT alone).
    public func walletAttestations(hardwareKey: HolderKey, tag: String, walletKey: HolderKey, integrity: String,
                                   legacy: Bool, deviceFormat: String = "dev") throws -> [String: String] {
        let assertion = try attestationRequest(type: legacy ? Self.legacyRequestType : Self.requestType, hardwareKey: hardwareKey,
                                               tag: tag, walletKey: walletKey, integrity: integrity, deviceFormat: deviceFormat)
        return try walletAttestations(assertion: assertion, legacy: legacy)
    }

    /// `typ` of the request JWT at `/wallet-attestations`, and at `/token` (`legacy`).
    public static let requestType = "wp-war+jwt"
    public static let legacyRequestType = "war+jwt"

    /// Sends a request JWT made by `attestationRequest`: to `/token` as the jwt-bearer grant's
    /// assertion with `legacy`, else to `/wallet-attestations`; the attestations by format.
    public func walletAttestations(assertion: String, legacy: Bool) throws -> [String: String] {
        if legacy {
            let form = Parameters(pairs: [(name: "grant_type", value: "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                                          (name: "assertion", value: assertion)]).encoded
            let reply = try send("POST", "/token", headers: ["Content-Type: application/x-www-form-urlencoded",
                                                             "Accept: application/jwt, application/json"], body: Array(form.utf8))
            guard reply.status == 200 else { throw WalletError.server(step: "wallet attestation (/token)", status: reply.status, body: reply.text) }
            return ["jwt": Self.trimmed(reply.body)]
        }
        let reply = try postJSON("/wallet-attestations", ["assertion": .string(assertion)], step: "wallet attestations")
        var out: [String: String] = [:]
        for entry in reply.json?["wallet_attestations"]?.arrayValue ?? [] {
            if let format = entry.objectValue?["format"]?.stringValue, let value = entry.objectValue?["wallet_attestation"]?.stringValue {
                out[format] = value
            }
        }
        guard out["jwt"] != nil else { throw WalletError.malformed("wallet attestations: no jwt attestation in \(reply.text)") }
        return out
    }

    /// The body as text without surrounding ASCII whitespace, trimmed on its bytes: Foundation's
    /// trimming goes through UTF-16, which cost the load client more than the whole request for
    /// an attestation of 10–15 KB (its `trust_chain` header).
    static func trimmed(_ body: [UInt8]) -> String {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let first = body.firstIndex(where: { !isSpace($0) }), let last = body.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(decoding: body[first...last], as: UTF8.self)
    }

    /// `POST <wp>/key-attestations`: a `key-attestation+jwt` for `keys` carrying the issuer's `c_nonce`.
    public func keyAttestation(hardwareKey: HolderKey, tag: String, keys: [HolderKey], cNonce: String?) throws -> String {
        let nonce = try nonce()
        var claims: [String: JSONValue] = [
            "iss": .string("\(provider)/instance/\(tag)"), "aud": .string(provider), "iat": .int(WalletProofs.now()),
            "nonce": .string(nonce), "keys": .array(keys.map { .object($0.jwk) }),
        ]
        if let cNonce { claims["c_nonce"] = .string(cNonce) }
        let assertion = try hardwareKey.sign(header: ["typ": "wp-kar+jwt", "kid": .string(tag)], claims: claims)
        let reply = try postJSON("/key-attestations", ["assertion": .string(assertion)], step: "key attestation")
        guard let attestation = reply.json?["key_attestation"]?.stringValue else {
            throw WalletError.malformed("key attestation: no key_attestation in \(reply.text)")
        }
        return attestation
    }
}

/// `--verbose` lines: method, URL, headers and body of a request; status, headers and body of
/// the response.
public enum WalletTrace {
    public static func request(_ method: String, _ url: String, headers: [String], body: [UInt8]?) -> String {
        var lines = ["> \(method) \(url)"] + headers.map { "> \($0)" }
        if let body, !body.isEmpty { lines.append(">"); lines.append(String(decoding: body, as: UTF8.self)) }
        return lines.joined(separator: "\n")
    }

    public static func response(_ reply: WalletHTTP.Reply) -> String {
        var lines = ["< \(reply.status)"] + WalletHTTP.interestingHeaders.compactMap { name in reply.header(name).map { "< \(name): \($0)" } }
        if !reply.body.isEmpty { lines.append("<"); lines.append(reply.text) }
        return lines.joined(separator: "\n")
    }
}
