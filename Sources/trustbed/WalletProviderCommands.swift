import ArgumentParser
import Federation
import Support
import Foundation
import JSON
import Wallet

/// `trustbed wallet register` and `trustbed wallet attest`: the CLI wallet as a Wallet Provider's
/// client (docs/wallet-provider.md), its state in a test wallet file.
struct WalletRegisterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Register a new wallet instance (a fresh hardware key) with a Wallet Provider.",
        discussion: """
        Makes a P-256 hardware key and a tag, then: GET <provider>/nonce → POST <provider>/dev/key-attestation \
        → POST <provider>/wallet-instance. The key, the tag, the provider and the instance state go to the test \
        wallet file (mode 0600; it holds private keys in clear: for testing only). --format android or apple: the \
        wallet makes the device key attestation itself (an Android Key Attestation chain or an App Attest object) \
        under TEST roots kept in test-roots/ beside the wallet file, which the provider must list in its \
        android_roots / apple_roots (and, for apple, the app id in apple_app_ids); see `trustbed wallet test-roots`.
        """)

    @Option(help: "The Wallet Provider's entity ID (its base URL, e.g. http://127.0.0.1:8080/wallet-provider).") var provider: String
    @Option(name: .customLong("trust-anchor"),
            help: "Resolve the provider's trust chain to this Trust Anchor (OpenID Federation 1.0 §10) before registering; a provider that does not chain to it is refused.")
    var trustAnchor: String?
    @Option(help: "pass or fail: the device integrity the development key attestation states.") var integrity = "pass"
    @Option(help: "dev (the provider's development attestation), android or apple (made here under the test roots).") var format = "dev"
    @Option(name: .customLong("app-id"), help: "--format apple: the TEAMID.bundle.id the App Attest object names.")
    var appID = TestDeviceAttestations.defaultAppleAppID
    @Option(help: "The test wallet file (default: $XDG_DATA_HOME/trustbed/wallet.json).") var wallet: String?
    @Flag(help: "Replace an instance the wallet file already holds.") var force = false
    @Option(help: "NL account (the provider has remote_keys on): derive the PIN key from this PIN and a fresh salt (docs/wallet-provider.md, \"The PIN key\") and register its public key.")
    var pin: String?
    @Flag(help: "Log every request and response (method, URL, headers, body) to stderr.") var verbose = false

    func validate() throws {
        if let pin, pin.isEmpty { throw ValidationError("--pin must not be empty") }
        guard ["pass", "fail"].contains(integrity) else { throw ValidationError("--integrity must be pass or fail") }
        guard ["dev", "android", "apple"].contains(format) else { throw ValidationError("--format must be dev, android or apple") }
    }

    func run() throws {
        do {
            var file = try TestWalletFile.load(wallet ?? TestWalletFile.defaultPath())
            if file.hardwareKeyTag != nil, !force {
                throw WalletError.usage("\(file.path) already holds instance \(file.hardwareKeyTag!) at \(file.provider ?? "?"); pass --force to replace it")
            }
            if let trustAnchor {
                // Register only with a provider the federation vouches for (its keys self-published by the TA).
                let chain: TrustChain
                do {
                    chain = try TrustResolver(source: clientSource(), clock: SystemClock())
                        .resolve(subject: provider, anchors: [trustAnchor: .selfPublished])
                } catch {
                    throw WalletError.verification("\(provider) has no valid trust chain to \(trustAnchor): \(error)")
                }
                walletLog("trust chain: " + chain.statements.map { "\($0.issuer) → \($0.subject)" }.joined(separator: ", "))
            }
            let http = try WalletHTTP()
            if verbose { http.trace = walletLog }
            let client = WalletProviderClient(provider: provider, http: http)
            let hardwareKey = try HolderKey()
            var tag = "trustbed-cli-" + WalletProofs.randomToken(12)
            // Issue 21: the PIN key, derived here and never stored; only its salt is kept.
            let pinSalt = PINKey.newSalt()
            let pinKey = try pin.map { try PINKey.derive(pin: $0, salt: pinSalt) }
            switch format {
            case "dev":
                try client.register(hardwareKey: hardwareKey, tag: tag, integrity: integrity, pinPublicKey: pinKey?.jwk)
            default:
                let roots = try TestDeviceAttestations(besideWallet: file.path)
                // App Attest names a key by its id, the SHA-256 of the public point.
                if format == "apple" { tag = try TestDeviceAttestations.appleKeyID(hardwareKey) }
                try client.register(hardwareKey: hardwareKey, tag: tag, format: format, testRoots: roots, appleAppID: appID,
                                    pinPublicKey: pinKey?.jwk)
            }
            // A new instance starts the file afresh but keeps the credentials received so far:
            // they stay bound to keys the file holds, and `wallet present` can still show them.
            let kept = file.credentials
            file = TestWalletFile(path: file.path)
            file.credentials = kept
            file.hardwareKey = try hardwareKey.privateJWK()
            file.hardwareKeyTag = tag
            file.provider = client.provider
            file.trustAnchor = trustAnchor
            file.format = format
            file.integrity = integrity
            file.state = "installed"
            if let pinKey {
                file.nl = ["pin_salt": .string(Base64URL.encode(pinSalt)), "pin_public_key": .object(pinKey.jwk), "account_state": "active"]
            }
            try file.save()
            var summary: [String: JSONValue] = ["provider": .string(client.provider), "hardware_key_tag": .string(tag), "format": .string(format),
                                                "state": "installed", "wallet": .string(file.path)]
            if pinKey != nil { summary["nl_account"] = true; summary["account_state"] = "active" }
            print(JSONValue.object(summary).serialized(pretty: true))
        } catch {
            walletLog("error: \(error)")
            throw ExitCode(1)
        }
    }
}

/// `trustbed wallet instruct <name>` (issue 21): one instruction of an NL account, for trying the
/// provider's instructions by hand and in teaching scripts.
struct WalletInstructCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instruct",
        abstract: "Send one instruction of an NL account (challenge, then the instruction signed by the PIN key and the hardware key).",
        discussion: """
        POST <provider>/instructions/challenge → POST <provider>/instructions/<name> with a wp-instruction+jwt signed by \
        the PIN key (derived from --pin and the wallet file's salt) and the hardware key's signature over it. Prints the \
        result JSON (the result JWT's `result` claim); an error prints the provider's JSON error and exits 1.
        """)

    @Argument(help: "The instruction: generate_keys, sign, issue_key_attestation, create_proofs, disclose_recovery_code, ...") var name: String
    @Option(help: "The instruction's params as a JSON object.") var params = "{}"
    @Option(help: "The PIN (a wrong one counts as a wrong PIN at the provider).") var pin: String
    @Option(help: "The test wallet file (default: $XDG_DATA_HOME/trustbed/wallet.json).") var wallet: String?
    @Flag(help: "Log every request and response (method, URL, headers, body) to stderr.") var verbose = false

    func run() throws {
        try runWalletCommand {
            var file = try TestWalletFile.load(wallet ?? TestWalletFile.defaultPath())
            let (provider, tag, hardwareKey) = try file.nlInstance()
            guard let object = (try? JSONValue.parse(Array(params.utf8)))?.objectValue else {
                throw WalletError.usage("--params must be a JSON object")
            }
            let http = try WalletHTTP()
            if verbose { http.trace = walletLog }
            let reply = try WalletProviderClient(provider: provider, http: http)
                .sendInstruction(name, params: object, tag: tag, signer: try file.pinKey(pin: pin), hardwareKey: hardwareKey)
            guard reply.status == 200, let result = reply.result else {
                // The wrong PIN that blocks the account is refused like the ones before it; the
                // wallet file keeps the state the provider now holds, as `pin-recovery` reads it.
                if reply.error == "account_blocked", file.nl["account_state"]?.stringValue != "blocked" {
                    file.nl["account_state"] = "blocked"
                    try file.save()
                }
                throw WalletError.server(step: "instruction \(name)", status: reply.status, body: reply.text)
            }
            print(result.serialized(pretty: true))
        }
    }
}

struct WalletAttestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attest",
        abstract: "Get a wallet attestation for a fresh wallet key, print it and keep it in the wallet file.",
        discussion: """
        Default: POST <provider>/wallet-attestations with a wp-war+jwt request (every format the provider makes is \
        kept). --legacy: POST <provider>/token with the jwt-bearer grant and a war+jwt request (the jwt format only). \
        Prints the jwt attestation on stdout.
        """)

    @Flag(help: "Use the older wire format: the jwt-bearer grant at <provider>/token.") var legacy = false
    @Option(help: "The test wallet file (default: $XDG_DATA_HOME/trustbed/wallet.json).") var wallet: String?
    @Flag(help: "Print every format as one JSON object instead of the jwt attestation.") var json = false
    @Flag(help: "Log every request and response (method, URL, headers, body) to stderr.") var verbose = false

    func run() throws {
        do {
            var file = try TestWalletFile.load(wallet ?? TestWalletFile.defaultPath())
            guard let jwk = file.hardwareKey, let tag = file.hardwareKeyTag, let provider = file.provider else {
                throw WalletError.usage("\(file.path) holds no registered instance: run `trustbed wallet register` first")
            }
            let http = try WalletHTTP()
            if verbose { http.trace = walletLog }
            let client = WalletProviderClient(provider: provider, http: http)
            let walletKey = try HolderKey()
            let attestations = try client.walletAttestations(hardwareKey: try HolderKey(privateJWK: jwk), tag: tag, walletKey: walletKey,
                                                             integrity: file.integrity ?? "pass", legacy: legacy,
                                                             deviceFormat: file.format ?? "dev")
            file.walletKey = try walletKey.privateJWK()
            file.attestations = attestations.mapValues { .string($0) }
            file.clientID = (try? AttestedClient(wallet: file))?.clientID
            file.state = "operational"
            try file.save()
            print(json ? JSONValue.object(file.attestations).serialized(pretty: true) : attestations["jwt"]!)
        } catch {
            walletLog("error: \(error)")
            throw ExitCode(1)
        }
    }
}

/// `trustbed wallet test-roots`: where the CLI wallet's test device roots are (made if missing),
/// for a provider's `android_roots` / `apple_roots`.
struct WalletTestRootsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-roots",
        abstract: "Print (creating them if missing) the TEST roots `register --format android|apple` signs under.",
        discussion: """
        Prints {"android_root", "apple_root", "apple_app_id"}: copy the two PEM files into the provider's Entities/ \
        folder and list them in services.wallet_provider.android_roots / apple_roots, and the app id in apple_app_ids. \
        Their private keys sit beside them (test-roots/*.key.pem, mode 0600): anyone holding them can make devices \
        such a provider believes, so never configure them on a provider that matters.
        """)

    @Option(help: "The test wallet file (default: $XDG_DATA_HOME/trustbed/wallet.json); the roots are in test-roots/ beside it.")
    var wallet: String?

    func run() throws {
        do {
            let roots = try TestDeviceAttestations(besideWallet: wallet ?? TestWalletFile.defaultPath())
            print(JSONValue.object(["android_root": .string(roots.androidRootPath), "apple_root": .string(roots.appleRootPath),
                                    "apple_app_id": .string(TestDeviceAttestations.defaultAppleAppID)]).serialized(pretty: true))
        } catch {
            walletLog("error: \(error)")
            throw ExitCode(1)
        }
    }
}
