import Foundation
import JSON
import Support
import Wallet

/// Benchmark-only. A wallet instance the load client registered: its tag and hardware key.
struct ProviderInstance {
    let tag: String
    let hardwareKey: HolderKey

    /// A new instance registered at `client`'s provider: `dev` through the provider's development
    /// key attestation, `android` / `apple` with one made here under `testRoots` (an Apple
    /// instance's tag is its App Attest key id, whatever `tag` says).
    static func register(client: WalletProviderClient, tag: String, format: String,
                         testRoots: TestDeviceAttestations?) throws -> ProviderInstance {
        let hardwareKey = try HolderKey()
        guard format != "dev", let testRoots else {
            try client.register(hardwareKey: hardwareKey, tag: tag, integrity: "pass")
            return ProviderInstance(tag: tag, hardwareKey: hardwareKey)
        }
        let tag = format == "apple" ? try TestDeviceAttestations.appleKeyID(hardwareKey) : tag
        try client.register(hardwareKey: hardwareKey, tag: tag, format: format, testRoots: testRoots)
        return ProviderInstance(tag: tag, hardwareKey: hardwareKey)
    }
}

/// Benchmark-only. The `hardware_key_tag`s of one bench run: a run prefix random enough that
/// runs against the same database never collide (a tag is registered once per provider), the
/// thread and a counter. Printable ASCII without spaces, as the provider and the
/// acknowledgement file want.
struct BenchTags: Sendable {
    let prefix: String

    init(prefix: String = "bench-" + WalletProofs.randomToken(6)) { self.prefix = prefix }

    /// The tag of iteration `iteration` of a registration flow.
    func registration(_ iteration: Int) -> String { "\(prefix)-r\(iteration)" }
    /// The tag of thread `thread`'s `index`-th warm-up instance.
    func warmUp(thread: Int, index: Int) -> String { "\(prefix)-w\(thread)-\(index)" }
}

/// `--flow register | attest | attest-legacy`: the Wallet Provider's own flows
/// (docs/wallet-provider.md), through the CLI wallet's `WalletProviderClient`.
///
/// `register` times nonce → development key attestation → registration (204), a new tag per
/// iteration; the hardware keys come from the shared pool (the provider keys instances by tag,
/// not by key, so the pool changes nothing it does). `attest` and `attest-legacy` time nonce →
/// development key attestation (bound to that nonce, as the request must carry one) → wallet
/// attestation, round-robin over the `instances` instances the thread registered before the
/// clock started, each request for a wallet key of the pool. With `--device-format android` or
/// `apple` those instances are registered with a key attestation made under the CLI's test
/// roots (`TestDeviceAttestations`), and each iteration is nonce → wallet attestation, the
/// request carrying the hardware signature and an `integrity_assertion` as a phone's does.
final class ProviderWorker: FlowWorker {
    let flow: BenchFlow
    let client: WalletProviderClient
    let keys: [HolderKey]
    let tags: BenchTags
    let acknowledged: AcknowledgementLog?
    /// `dev`, or `android` / `apple` (registered under `testRoots`, no per-request device work).
    let deviceFormat: String
    private(set) var instances: [ProviderInstance] = []
    /// Which warm-up instance is next: counted per thread, because the iteration numbers a
    /// thread claims from the shared counter may skip some remainders (two threads taking turns
    /// would each only ever see every other instance).
    private var nextInstance = 0

    init(flow: BenchFlow, client: WalletProviderClient, keys: [HolderKey], tags: BenchTags, thread: Int, instances: Int,
         acknowledged: AcknowledgementLog?, deviceFormat: String = "dev", testRoots: TestDeviceAttestations? = nil) throws {
        precondition(flow == .register || flow == .attest || flow == .attestLegacy, "not a Wallet Provider flow: \(flow)")
        precondition(deviceFormat == "dev" || (flow != .register && testRoots != nil), "\(deviceFormat) instances need test roots")
        self.flow = flow
        self.client = client
        self.keys = keys
        self.tags = tags
        self.acknowledged = acknowledged
        self.deviceFormat = deviceFormat
        guard flow != .register else { return }
        for index in 0..<max(1, instances) {
            let instance = try ProviderInstance.register(client: client, tag: tags.warmUp(thread: thread, index: index),
                                                         format: deviceFormat, testRoots: testRoots)
            self.instances.append(instance)
        }
    }

    func run(iteration: Int, step: inout BenchRun.Step, totals: inout BenchRun.Totals) throws {
        let instance: ProviderInstance
        if flow == .register {
            instance = ProviderInstance(tag: tags.registration(iteration), hardwareKey: keys[iteration % keys.count])
        } else {
            instance = instances[nextInstance % instances.count]
            nextInstance += 1
        }
        var started = DispatchTime.now()
        step = .nonce
        let nonce = try client.nonce()
        totals.record(.nonce, since: &started)

        var keyAttestation: String?
        if deviceFormat == "dev" {
            step = .deviceAttestation
            keyAttestation = try client.developmentKeyAttestation(hardwareKey: instance.hardwareKey, tag: instance.tag, nonce: nonce,
                                                                  integrity: "pass")
            totals.record(.deviceAttestation, since: &started)
        }

        if flow == .register {
            step = .registration
            try client.registerInstance(nonce: nonce, keyAttestation: keyAttestation ?? "", tag: instance.tag)
            totals.record(.registration, since: &started)
            acknowledged?.record(tag: instance.tag)
            return
        }
        step = .walletAttestation
        let legacy = flow == .attestLegacy
        let walletKey = keys[iteration % keys.count]
        let request = try client.attestationRequest(
            type: legacy ? WalletProviderClient.legacyRequestType : WalletProviderClient.requestType, nonce: nonce,
            keyAttestation: keyAttestation, hardwareKey: instance.hardwareKey, tag: instance.tag, walletKey: walletKey)
        let attestations = try client.walletAttestations(assertion: request, legacy: legacy)
        totals.record(.walletAttestation, since: &started)
        try Self.check(attestations, walletKey: walletKey)
    }

    /// The answer must hold a JWT attestation for the wallet key the request carried: a 200 with
    /// anything else is not a wallet attestation and must not count. Only the payload is read,
    /// found by the first and last dot on the contiguous UTF-8 bytes: the attestation's
    /// `trust_chain` header makes it 10–15 KB, and a generic split of it (by Characters at first,
    /// then by a closure per byte) took the client more CPU than the rest of the flow.
    static func check(_ attestations: [String: String], walletKey: HolderKey) throws {
        guard var jwt = attestations["jwt"] else { throw WalletError.malformed("no jwt wallet attestation") }
        let payload = jwt.withUTF8 { bytes -> [UInt8]? in
            let dot = UInt8(ascii: ".")
            guard let first = bytes.firstIndex(of: dot), let last = bytes.lastIndex(of: dot), first < last,
                  !bytes[(first + 1)..<last].contains(dot) else { return nil }
            return Base64URL.decode(UnsafeBufferPointer(rebasing: bytes[(first + 1)..<last]))
        }
        guard let payload, let claims = try? JSONValue.parse(payload), let jwk = claims["cnf"]?["jwk"]?.objectValue else {
            throw WalletError.malformed("the wallet attestation is not a JWT with cnf.jwk")
        }
        guard jwk["x"] == walletKey.jwk["x"], jwk["y"] == walletKey.jwk["y"] else {
            throw WalletError.malformed("the wallet attestation's cnf.jwk is not the wallet key of the request")
        }
    }
}
