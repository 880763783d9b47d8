import Foundation
import JSON

/// The CLI wallet's state (`--wallet FILE`): a TEST wallet, its keys kept in clear as private JWKs in
/// a mode-0600 JSON file. Never a place for real credentials; the `about` member says so.
public struct TestWalletFile {
    public static let notice = "Trustbed TEST wallet: private keys in clear (private JWKs), for testing only. Never use it for real credentials."

    public var path: String
    /// The device's hardware key (the instance key the Wallet Provider registered).
    public var hardwareKey: [String: JSONValue]?
    public var hardwareKeyTag: String?
    /// The Wallet Provider's entity ID (its base URL).
    public var provider: String?
    /// The Trust Anchor the wallet trusts verifiers through (`openid_federation` client ids):
    /// the one `wallet register --trust-anchor` resolved the provider to.
    public var trustAnchor: String?
    /// `installed` after registration, `operational` after the first wallet attestation.
    public var state: String?
    public var format: String?
    /// The device integrity development key attestations state (`pass` | `fail`).
    public var integrity: String?
    /// The wallet key the attestations bind (`cnf.jwk`), and the attestations by format.
    public var walletKey: [String: JSONValue]?
    public var clientID: String?
    public var attestations: [String: JSONValue] = [:]
    /// Credentials received (`wallet receive --client-attestation`).
    public var credentials: [JSONValue] = []
    /// NL account state (issue 21): `pin_salt` (base64url, the PIN key's KDF salt: see
    /// `PINKey`), `pin_public_key`, and what the recovery and transfer commands keep (held key
    /// ids, sessions). The PIN itself is never stored.
    public var nl: [String: JSONValue] = [:]

    public init(path: String) { self.path = path }

    /// `$XDG_DATA_HOME/trustbed/wallet.json`, else `~/.local/share/trustbed/wallet.json`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/share")
        return base + "/trustbed/wallet.json"
    }

    /// The file, or an empty wallet when there is none yet.
    public static func load(_ path: String) throws -> TestWalletFile {
        var wallet = TestWalletFile(path: path)
        guard let data = FileManager.default.contents(atPath: path) else { return wallet }
        guard let json = (try? JSONValue.parse(Array(data)))?.objectValue else {
            throw WalletError.usage("\(path) is not a Trustbed test wallet (not a JSON object)")
        }
        guard json["type"]?.stringValue == "trustbed-test-wallet" else {
            throw WalletError.usage("\(path) is not a Trustbed test wallet (no \"type\": \"trustbed-test-wallet\")")
        }
        wallet.hardwareKey = json["hardware_key"]?.objectValue
        wallet.hardwareKeyTag = json["hardware_key_tag"]?.stringValue
        wallet.provider = json["provider"]?.stringValue
        wallet.trustAnchor = json["trust_anchor"]?.stringValue
        wallet.state = json["state"]?.stringValue
        wallet.format = json["format"]?.stringValue
        wallet.integrity = json["integrity"]?.stringValue
        wallet.walletKey = json["wallet_key"]?.objectValue
        wallet.clientID = json["client_id"]?.stringValue
        wallet.attestations = json["attestations"]?.objectValue ?? [:]
        wallet.credentials = json["credentials"]?.arrayValue ?? []
        wallet.nl = json["nl"]?.objectValue ?? [:]
        return wallet
    }

    public var json: JSONValue {
        var out: [String: JSONValue] = ["about": .string(Self.notice), "type": "trustbed-test-wallet", "version": 1]
        func put(_ name: String, _ value: String?) { if let value { out[name] = .string(value) } }
        if let hardwareKey { out["hardware_key"] = .object(hardwareKey) }
        put("hardware_key_tag", hardwareKeyTag)
        put("provider", provider)
        put("trust_anchor", trustAnchor)
        put("state", state)
        put("format", format)
        put("integrity", integrity)
        if let walletKey { out["wallet_key"] = .object(walletKey) }
        put("client_id", clientID)
        out["attestations"] = .object(attestations)
        out["credentials"] = .array(credentials)
        if !nl.isEmpty { out["nl"] = .object(nl) }
        return .object(out)
    }

    /// Written to a mode-0600 temporary file and renamed over the old one, so a crash leaves the
    /// old wallet or the new, never half of one, and the keys are never world-readable.
    public func save() throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        let temporary = path + ".tmp-\(getpid())"
        let bytes = Array((json.serialized(pretty: true) + "\n").utf8)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw WalletError.usage("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        fchmod(fd, 0o600)
        close(fd)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw WalletError.usage("cannot write \(path)")
        }
    }
}
