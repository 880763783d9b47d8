import Foundation
import JSON
import Support
import Wallet

/// Benchmark-only. A wallet instance the load client registered: its tag and hardware key.
struct ProviderInstance {
    let tag: String
    let hardwareKey: HolderKey
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
/// clock started, each request for a wallet key of the pool.
final class ProviderWorker: FlowWorker {
    let flow: BenchFlow
    let client: WalletProviderClient
    let keys: [HolderKey]
    let tags: BenchTags
    let acknowledged: AcknowledgementLog?
    private(set) var instances: [ProviderInstance] = []
    /// Which warm-up instance is next: counted per thread, because the iteration numbers a
    /// thread claims from the shared counter may skip some remainders (two threads taking turns
    /// would each only ever see every other instance).
    private var nextInstance = 0

    init(flow: BenchFlow, client: WalletProviderClient, keys: [HolderKey], tags: BenchTags, thread: Int, instances: Int,
         acknowledged: AcknowledgementLog?) throws {
        precondition(flow == .register || flow == .attest || flow == .attestLegacy, "not a Wallet Provider flow: \(flow)")
        self.flow = flow
        self.client = client
        self.keys = keys
        self.tags = tags
        self.acknowledged = acknowledged
        guard flow != .register else { return }
        for index in 0..<max(1, instances) {
            let instance = ProviderInstance(tag: tags.warmUp(thread: thread, index: index), hardwareKey: try HolderKey())
            try client.register(hardwareKey: instance.hardwareKey, tag: instance.tag, integrity: "pass")
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

        step = .deviceAttestation
        let keyAttestation = try client.developmentKeyAttestation(hardwareKey: instance.hardwareKey, tag: instance.tag, nonce: nonce,
                                                                  integrity: "pass")
        totals.record(.deviceAttestation, since: &started)

        if flow == .register {
            step = .registration
            try client.registerInstance(nonce: nonce, keyAttestation: keyAttestation, tag: instance.tag)
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
    /// anything else is not a wallet attestation and must not count. Split on the UTF-8 bytes:
    /// the attestation's `trust_chain` header makes it 10–15 KB, and splitting it by Characters
    /// took the client more CPU than the rest of the flow.
    static func check(_ attestations: [String: String], walletKey: HolderKey) throws {
        guard let jwt = attestations["jwt"] else { throw WalletError.malformed("no jwt wallet attestation") }
        let parts = jwt.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(decoding: parts[1], as: UTF8.self)),
              let claims = try? JSONValue.parse(payload), let jwk = claims["cnf"]?["jwk"]?.objectValue else {
            throw WalletError.malformed("the wallet attestation is not a JWT with cnf.jwk")
        }
        guard jwk["x"] == walletKey.jwk["x"], jwk["y"] == walletKey.jwk["y"] else {
            throw WalletError.malformed("the wallet attestation's cnf.jwk is not the wallet key of the request")
        }
    }
}
