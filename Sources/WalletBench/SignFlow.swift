import Foundation
import JSON
import Support
import Wallet

/// Benchmark-only. `--flow sign` (issue 21): an NL account's `sign` instruction. Each thread
/// registers an instance with a PIN key and has the provider generate one key before the clock
/// starts; an iteration is `POST <wp>/instructions/challenge` then `POST <wp>/instructions/sign`
/// of 32 bytes with that key, signed by the PIN key and the hardware key, whose answer must hold
/// a 64-byte signature.
final class SignWorker: FlowWorker {
    let client: WalletProviderClient
    let tag: String
    let hardwareKey: HolderKey
    let pinKey: HolderKey
    let params: [String: JSONValue]

    init(client: WalletProviderClient, tag: String) throws {
        self.client = client
        self.tag = tag
        hardwareKey = try HolderKey()
        pinKey = try HolderKey()
        try client.register(hardwareKey: hardwareKey, tag: tag, integrity: "pass", pinPublicKey: pinKey.jwk)
        let generated = try client.instruction("generate_keys", tag: tag, signer: pinKey, hardwareKey: hardwareKey)
        guard let keyID = generated["keys"]?.arrayValue?.first?["key_id"]?.stringValue else {
            throw WalletError.malformed("generate_keys answered no key id")
        }
        params = ["key_id": .string(keyID), "payload": .string(Base64URL.encode(Array(repeating: 0x5A, count: 32)))]
    }

    func run(iteration: Int, step: inout BenchRun.Step, totals: inout BenchRun.Totals) throws {
        var started = DispatchTime.now()
        step = .challenge
        let challenge = try client.instructionChallenge(tag: tag)
        totals.record(.challenge, since: &started)
        step = .instruction
        let reply = try client.sendInstruction("sign", params: params, tag: tag, signer: pinKey, hardwareKey: hardwareKey, challenge: challenge)
        guard reply.status == 200, let signature = reply.result?["signature"]?.stringValue, Base64URL.decode(signature)?.count == 64 else {
            throw WalletError.server(step: "sign instruction", status: reply.status, body: reply.text)
        }
        totals.record(.instruction, since: &started)
    }
}
