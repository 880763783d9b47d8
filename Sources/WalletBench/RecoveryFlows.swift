import Foundation
import JSON
import SDJWT
import Support
import Wallet

/// Benchmark-only. `--flow pin-recovery` (issue 21, item 3): whole PIN recoveries against a PID
/// Provider and a Wallet Provider with `remote_keys` (both in the same server for the floor
/// "a PIN recovery ≤ 3× a plain PID issuance"). Before the clock starts each thread registers an
/// NL account (hardware key, PIN key), gets a PID on a key the provider holds (`create_proofs`)
/// and discloses its recovery code once, as a wallet does at onboarding. Each flow is then what
/// the CLI's `wallet pin-recovery` does: admin offer → token (with the claims preview) → c_nonce
/// → `start_pin_recovery` (challenge + instruction, signed by a new PIN key) → credential request
/// with the provider's proofs → `disclose_recovery_code` (challenge + instruction), after which
/// the new PIN key is the account's for the next flow. The PIN keys are random keys here: the
/// KDF is the device's cost, not the server's.
final class PINRecoveryWorker: FlowWorker {
    let setup: IssuanceSetup
    let http: WalletHTTP
    let session: WalletSession
    let provider: WalletProviderClient
    let tag: String
    let hardwareKey: HolderKey
    private var pinKey: HolderKey

    init(setup: IssuanceSetup, http: WalletHTTP, provider: WalletProviderClient, tag: String) throws {
        self.setup = setup
        self.http = http
        self.provider = provider
        self.tag = tag
        hardwareKey = try HolderKey()
        pinKey = try HolderKey()
        try provider.register(hardwareKey: hardwareKey, tag: tag, integrity: "pass", pinPublicKey: pinKey.jwk)
        session = try WalletSession(context: setup.context, http: http, dpop: setup.dpop)
        session.readsPreviews = true
        // Onboarding: a PID on a held key, and its recovery code disclosed once.
        let token = try session.preAuthorizedToken(code: setup.offerCode(http: http), txCode: nil)
        var params: [String: JSONValue] = ["aud": .string(setup.context.issuer.credentialIssuer), "count": 1]
        if let nonce = try session.nonce() { params["nonce"] = .string(nonce) }
        let made = try provider.instruction("create_proofs", params: params, tag: tag, signer: pinKey, hardwareKey: hardwareKey)
        let pid = try credential(token, proofs: made["proofs"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        _ = try disclose(pid.credentials, signer: pinKey)
    }

    func run(iteration: Int, step: inout BenchRun.Step, totals: inout BenchRun.Totals) throws {
        // Made before the clock of the first step starts: key generation is the device's cost.
        let newPIN = try HolderKey()
        var started = DispatchTime.now()
        let (token, nonce) = try setup.tokenAndNonce(http: http, session: session, step: &step, totals: &totals, started: &started)
        guard RecoveryCodes.previewed(inTokenResponse: token.json).count == 1 else {
            throw WalletError.malformed("the token response carries no recovery code preview")
        }

        step = .startPINRecovery
        var params: [String: JSONValue] = ["pin_public_key": .object(newPIN.jwk), "aud": .string(setup.context.issuer.credentialIssuer),
                                           "count": 1]
        if let nonce { params["c_nonce"] = .string(nonce) }
        let started_ = try provider.instruction("start_pin_recovery", params: params, tag: tag, signer: newPIN, hardwareKey: hardwareKey)
        totals.record(.startPINRecovery, since: &started)

        step = .credential
        let delivery = try credential(token, proofs: started_["proofs"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        totals.record(.credential, since: &started)
        totals.credentials += delivery.credentials.count
        setup.acknowledged?.record(delivery.credentials)

        step = .disclosure
        let state = try disclose(delivery.credentials, signer: newPIN)
        totals.record(.disclosure, since: &started)
        guard state == "active" else { throw WalletError.malformed("the account is \(state) after the disclosure, not active") }
        pinKey = newPIN
    }

    private func credential(_ token: TokenResponse, proofs: [String]) throws -> CredentialDelivery {
        let id = setup.configuration.id
        return try session.credential(accessToken: token.accessToken, configurationID: id,
                                      identifier: token.credentialIdentifiers[id]?.first, proofs: proofs)
    }

    /// `disclose_recovery_code` of the first credential's recovery code; the account state.
    private func disclose(_ credentials: [JSONValue], signer: HolderKey) throws -> String {
        guard let text = credentials.first?.stringValue else { throw WalletError.malformed("no credential to disclose from") }
        let result = try provider.instruction("disclose_recovery_code", params: ["sd_jwt": .string(try Self.recoveryCodePresentation(text))],
                                              tag: tag, signer: signer, hardwareKey: hardwareKey)
        return result["account_state"]?.stringValue ?? ""
    }

    /// The issuer JWT and the one top-level `recovery_code` disclosure, found without parsing
    /// the other ~35 disclosures (a PID's `recovery_code` is a top-level claim, so its disclosure
    /// needs no other to be shown; RFC 9901 §5.2). The client's work, kept small so the
    /// benchmark's CPU per flow is mostly the servers'.
    static func recoveryCodePresentation(_ credential: String) throws -> String {
        // On the UTF-8 bytes: splitting the ~5 KB PID as a String (grapheme by grapheme) and
        // searching each decoded disclosure with a generic `starts(with:)` per offset were half
        // of the client's CPU per recovery.
        let bytes = Array(credential.utf8)
        let parts = bytes.split(separator: UInt8(ascii: "~"), omittingEmptySubsequences: false)
        let marker = Array("\"recovery_code\"".utf8)
        for part in parts.dropFirst() where !part.isEmpty {
            guard let decoded = part.withUnsafeBufferPointer({ Base64URL.decode($0) }), Self.contains(decoded, marker) else { continue }
            let encoded = String(decoding: part, as: UTF8.self)
            if let disclosure = try? Disclosure(encoded: encoded), disclosure.name == "recovery_code" {
                return String(decoding: parts[0], as: UTF8.self) + "~" + encoded + "~"
            }
        }
        throw WalletError.malformed("the PID has no recovery_code disclosure")
    }

    private static func contains(_ bytes: [UInt8], _ marker: [UInt8]) -> Bool {
        guard bytes.count > marker.count, let first = marker.first else { return false }
        for i in 0 ... bytes.count - marker.count where bytes[i] == first && bytes[i ..< i + marker.count].elementsEqual(marker) {
            return true
        }
        return false
    }
}
