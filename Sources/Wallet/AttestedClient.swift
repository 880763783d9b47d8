import Foundation
import JOSE
import JSON

/// The test wallet file's wallet attestation used for attestation-based client authentication
/// (draft-ietf-oauth-attestation-based-client-auth §5, HAIP 1.0 §4.3): the attestation and a
/// fresh PoP signed by the wallet key (`cnf.jwk`) on every request; `client_id` is the
/// attestation's `sub`.
public struct AttestedClient {
    public let attestation: String
    public let clientID: String
    let key: HolderKey

    public init(wallet: TestWalletFile) throws {
        guard let attestation = wallet.attestations["jwt"]?.stringValue, let jwk = wallet.walletKey else {
            throw WalletError.usage("\(wallet.path) holds no wallet attestation: run `trustbed wallet attest` first")
        }
        try self.init(attestation: attestation, key: try HolderKey(privateJWK: jwk), source: wallet.path)
    }

    /// A wallet attestation just received for `key` (the load client keeps it in memory);
    /// `source` names where it came from in errors.
    public init(attestation: String, key: HolderKey, source: String = "the wallet attestation") throws {
        let claims: [String: JSONValue]
        do { claims = try JWS.parseClaims(attestation).claims } catch {
            throw WalletError.usage("\(source): the stored wallet attestation is not a JWT: \(error)")
        }
        guard let sub = claims["sub"]?.stringValue, !sub.isEmpty else {
            throw WalletError.usage("\(source): the stored wallet attestation has no sub")
        }
        if let exp = claims["exp"]?.intValue, exp <= WalletProofs.now() {
            throw WalletError.usage("\(source): the wallet attestation expired: run `trustbed wallet attest` again")
        }
        self.attestation = attestation
        clientID = sub
        self.key = key
    }

    /// §5.2: `typ` oauth-client-attestation-pop+jwt; `iss` = client_id, `aud` = the AS issuer, `jti`, `iat`.
    public func pop(audience: String) throws -> String {
        try key.sign(header: ["typ": "oauth-client-attestation-pop+jwt"],
                     claims: ["iss": .string(clientID), "aud": .string(audience), "jti": .string(WalletProofs.randomToken()),
                              "iat": .int(WalletProofs.now())])
    }

    public func headers(audience: String) throws -> [String] {
        ["OAuth-Client-Attestation: \(attestation)", "OAuth-Client-Attestation-PoP: \(try pop(audience: audience))"]
    }

    /// Key attestations from the wallet file's Wallet Provider, signed for by its hardware key.
    public static func keyAttester(wallet: TestWalletFile, http: WalletHTTP) throws -> ([HolderKey], String?) throws -> String {
        guard let jwk = wallet.hardwareKey, let tag = wallet.hardwareKeyTag, let provider = wallet.provider else {
            throw WalletError.usage("\(wallet.path) holds no registered instance: run `trustbed wallet register` first")
        }
        let hardwareKey = try HolderKey(privateJWK: jwk)
        let client = WalletProviderClient(provider: provider, http: http)
        return { keys, cNonce in try client.keyAttestation(hardwareKey: hardwareKey, tag: tag, keys: keys, cNonce: cNonce) }
    }
}
