import JOSE
import JSON

/// The PIN certificate `start_pin_recovery` returns (issue 21, item 3; the NL wallet's "wallet
/// certificate", renewed when the PIN key changes): a JWT by the provider's signing key that
/// binds the account's new PIN key to its instance's hardware key, so the wallet can show any
/// party that this PIN key is the account's. Header `typ` `wp-pin-certificate+jwt`, `kid` and
/// `x5c` (the signing certificate, as the wallet attestation's); claims `iss` (the provider),
/// `sub` (the account), `instance` (the hardware key tag), `hw_jkt` (RFC 7638 thumbprint of the
/// hardware key), `cnf.jwk` (the PIN public key, RFC 7800) and `iat`. It has no `exp`: it stays
/// valid until the PIN key changes again, when the provider stops honouring the old key.
public struct PINCertificate: Sendable {
    public static let type = "wp-pin-certificate+jwt"

    public let provider: String
    public let account: String
    public let instance: String
    public let hardwareKeyThumbprint: String
    public let pinKey: JWK
    public let issuedAt: Int64

    public init(provider: String, account: String, instance: String, hardwareKeyThumbprint: String, pinKey: JWK,
                issuedAt: Int64) {
        self.provider = provider
        self.account = account
        self.instance = instance
        self.hardwareKeyThumbprint = hardwareKeyThumbprint
        self.pinKey = pinKey
        self.issuedAt = issuedAt
    }

    public var claims: [String: JSONValue] {
        ["iss": .string(provider), "sub": .string(account), "instance": .string(instance), "hw_jkt": .string(hardwareKeyThumbprint),
         "cnf": ["jwk": pinKey.jsonValue], "iat": .int(issuedAt)]
    }
}

extension WalletProvider {
    /// Signs `certificate` with the provider's signing key (the wallet attestation's key).
    public func sign(_ certificate: PINCertificate) throws(WalletProviderError) -> String {
        do {
            return try JWS.sign(payload: certificate.claims, key: keys.signingKey, algorithm: .ES256, keyID: keys.signingJWK.kid ?? "",
                                type: PINCertificate.type, extraHeader: ["x5c": .array(keys.x5c.map(JSONValue.string))])
        } catch {
            throw WalletProviderError(.serverError, "the PIN certificate could not be signed", cause: "\(error)")
        }
    }
}
