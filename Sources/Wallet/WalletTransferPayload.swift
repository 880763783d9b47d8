import Cryptography
import JOSE
import JSON
import SDJWT
import Support

/// What the destination phone shows the source in a device transfer (the NL wallet's transfer
/// QR code): the session id and the public key the source encrypts its wallet to. The NL
/// wallet puts them in a universal link's fragment as `s=<session id>&k=<JSON JWK>`
/// (`wallet_core/wallet/src/transfer/uri.rs`); here the link is `<wp>/transfer#s=…&k=…`, so a
/// test wallet reading the code also learns the provider.
public struct TransferQRContent: Sendable, Equatable {
    public let provider: String
    public let sessionID: String
    /// The destination's ephemeral P-256 public JWK (kty, crv, x, y).
    public let publicKey: [String: JSONValue]

    public init(provider: String, sessionID: String, publicKey: [String: JSONValue]) {
        self.provider = provider
        self.sessionID = sessionID
        self.publicKey = publicKey
    }

    public var uri: String {
        provider + "/transfer#" + Parameters(pairs: [("s", sessionID), ("k", JSONValue.object(publicKey).serialized())]).encoded
    }

    /// Reads the link back (what the source does after scanning the code).
    public static func parse(_ text: String) throws -> TransferQRContent {
        guard let hash = text.firstIndex(of: "#"), text[..<hash].hasSuffix("/transfer") else {
            throw WalletError.usage("not a transfer QR code: expected <wallet provider>/transfer#s=<session id>&k=<JWK>")
        }
        let provider = String(text[..<hash].dropLast("/transfer".count))
        let fragment = Parameters(encoded: String(text[text.index(after: hash)...]))
        guard let session = fragment.all("s").first, !session.isEmpty, let keyText = fragment.all("k").first,
              let key = (try? JSONValue.parse(Array(keyText.utf8)))?.objectValue, (try? JWK(json: key))?.kty == "EC" else {
            throw WalletError.usage("the transfer QR code needs s (the session id) and k (an EC public JWK)")
        }
        return TransferQRContent(provider: provider, sessionID: session, publicKey: key)
    }
}

/// The wallet a source sends: its stored credentials (with their holder keys) as JSON,
/// encrypted with ECDH-ES + A256GCM (RFC 7518 §4.6, §5.3) to the destination's key from the
/// QR code. The Wallet Provider relays it and cannot read it.
public enum WalletTransferPayload {
    public static let type = "trustbed-wallet-transfer"

    public static func seal(credentials: [JSONValue], to recipient: [String: JSONValue]) throws -> String {
        let plaintext = JSONValue.object(["type": .string(type), "credentials": .array(credentials)]).bytes
        var jwk = recipient
        jwk["use"] = nil
        jwk["alg"] = nil
        return try JWE.encrypt(plaintext, to: try JWK(json: jwk), encryption: .A256GCM, extraHeader: ["cty": "json"])
    }

    /// The credentials, decrypted with the destination's ephemeral private key.
    public static func open(_ payload: String, with key: HolderKey) throws -> [JSONValue] {
        let plaintext = try JWE.parse(payload).decrypt(with: key.privateKey, allowed: [.A256GCM])
        guard let object = (try? JSONValue.parse(plaintext))?.objectValue, object["type"]?.stringValue == type,
              let credentials = object["credentials"]?.arrayValue else {
            throw WalletError.malformed("the transfer payload is not a \(type) document")
        }
        return credentials
    }
}

/// The destination's first `disclose_recovery_code` (issue 21, item 2): its stored PID (SD-JWT
/// VC) presented with only `recovery_code` disclosed. A PID bound to a key the wallet file holds
/// carries a key-binding JWT with `aud` = the provider and `nonce` = the instruction's challenge;
/// one bound to a key the provider holds needs none (the provider knows the key is the account's).
public enum RecoveryCodeDisclosure {
    /// The first stored SD-JWT credential that can disclose `recovery_code`.
    public static func presentation(from credentials: [JSONValue], provider: String, challenge: String) throws -> String {
        for entry in credentials.compactMap(\.objectValue) {
            guard let text = entry["credential"]?.stringValue, text.contains("~"), let sdJWT = try? SDJWT.parse(text),
                  (try? sdJWT.disclosedClaims())?.contains(where: { $0.path.description == "recovery_code" }) == true else { continue }
            let presented = try sdJWT.presentation(disclosing: ["recovery_code"])
            guard let jwk = entry["holder_key"]?.objectValue else { return presented.serialized }
            let key = try HolderKey(privateJWK: jwk)
            return try presented.addingKeyBinding(key: key.privateKey, algorithm: .ES256, audience: provider, nonce: challenge,
                                                  issuedAt: WalletProofs.now()).serialized
        }
        throw WalletError.usage("the wallet file holds no SD-JWT PID with a recovery_code; receive one first (`wallet receive ... --wallet FILE`)")
    }
}
