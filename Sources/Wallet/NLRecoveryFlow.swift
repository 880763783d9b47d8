import Foundation
import JSON
import SDJWT
import Support

/// What `trustbed wallet pin-recovery` and `trustbed wallet renew` were asked to do.
public struct NLRecoveryOptions {
    /// The PID Provider's credential offer (pre-authorized): URL, `credential_offer_uri` or JSON.
    public var offer: String
    public var txCode: String?
    /// `pin-recovery`: the new PIN (its key is derived with a fresh salt; the PIN is never stored).
    public var newPIN: String?
    /// Go on although the preview's recovery code is not the stored PID's (to see the Wallet
    /// Provider refuse it).
    public var continueOnMismatch = false
    public var count = 1
    public var walletPath: String?
    public var verbose = false
    /// Progress lines (stderr in the CLI): the states the account passes through.
    public var log: (String) -> Void = { _ in }

    public init(offer: String) { self.offer = offer }
}

/// The CLI wallet's side of the NL recovery flows (issue 21, items 3 and 4), on a wallet file
/// registered with `--pin` (`nl.pin_salt`): the PID Provider's token and claims preview, the
/// wallet-side recovery-code check (`RecoveryCodes`), the Wallet Provider's instruction that
/// makes proofs by keys it holds, the credential request with those proofs, and
/// `disclose_recovery_code` of that PID (an SD-JWT presentation of `recovery_code` alone; its
/// key is one the provider holds, so no key-binding JWT).
///
/// - PIN recovery (`pinRecovery`): `start_pin_recovery` signed by the hardware key and the new
///   PIN key; the PID it yields only proves who the person is (the provider deletes its keys
///   afterwards), so it is not stored. The new PIN's salt and key replace the old in the file.
/// - Renewal (`renew`): `create_proofs {"renewal": true}` signed by the PIN key (`pin`); the new
///   PID is stored in the file with the ids of the keys the provider holds for it.
public struct NLRecoveryFlow {
    public let options: NLRecoveryOptions

    public init(options: NLRecoveryOptions) { self.options = options }

    /// The account's wallet file and the provider client, checked once.
    struct Account {
        var file: TestWalletFile
        let client: WalletProviderClient
        let tag: String
        let hardwareKey: HolderKey

        init(_ options: NLRecoveryOptions, http: WalletHTTP) throws {
            file = try TestWalletFile.load(options.walletPath ?? TestWalletFile.defaultPath())
            guard let provider = file.provider, let tag = file.hardwareKeyTag, let jwk = file.hardwareKey else {
                throw WalletError.usage("\(file.path) holds no wallet instance; run `trustbed wallet register --pin P` first")
            }
            guard file.nl["pin_salt"]?.stringValue != nil else {
                throw WalletError.usage("\(file.path) is not an NL account (registered without --pin)")
            }
            client = WalletProviderClient(provider: provider, http: http)
            self.tag = tag
            hardwareKey = try HolderKey(privateJWK: jwk)
        }

        func pinKey(_ pin: String) throws -> HolderKey {
            guard let salt = file.nl["pin_salt"]?.stringValue.flatMap(Base64URL.decode) else {
                throw WalletError.usage("\(file.path): nl.pin_salt is not base64url")
            }
            return try PINKey.derive(pin: pin, salt: salt)
        }

        var lastState: String { file.nl["account_state"]?.stringValue ?? "unknown" }
    }

    /// The issuer side up to the c_nonce: token (with previews), recovery-code check, nonce.
    struct IssuerStep {
        let session: WalletSession
        let token: TokenResponse
        let configuration: IssuerMetadata.Configuration
        let nonce: String?
    }

    private func issuerStep(_ account: Account, http: WalletHTTP) throws -> IssuerStep {
        let offer = try CredentialOffer.resolve(options.offer, http: http)
        guard let pre = offer.preAuthorized else { throw WalletError.usage("the offer has no pre-authorized_code grant") }
        let context = try IssuerContext.discover(offer: offer, http: http, grantServer: pre.authorizationServer)
        guard let configuration = offer.configurationIDs.compactMap({ context.issuer.configurations[$0] })
            .first(where: { $0.format == "dc+sd-jwt" }) else {
            throw WalletError.usage("the offer has no dc+sd-jwt configuration: the recovery code is disclosed from an SD-JWT VC PID")
        }
        let session = try WalletSession(context: context, http: http, dpop: true)
        session.readsPreviews = true
        if pre.txCode != nil, options.txCode == nil { throw WalletError.usage("the offer asks for a tx_code: pass --tx-code") }
        let token = try session.preAuthorizedToken(code: pre.code, txCode: pre.txCode == nil ? nil : options.txCode)
        options.log("token: \(token.tokenType) from \(context.authorizationServer.issuer)")
        let check = RecoveryCodes.compare(previewed: RecoveryCodes.previewed(inTokenResponse: token.json),
                                          stored: RecoveryCodes.stored(in: account.file))
        options.log(check.report)
        if !check.matches {
            guard options.continueOnMismatch else {
                throw WalletError.verification(check.report + "; stopping before the Wallet Provider is asked (--continue-on-mismatch goes on)")
            }
            options.log("going on despite the check (--continue-on-mismatch)")
        }
        return IssuerStep(session: session, token: token, configuration: configuration, nonce: try session.nonce())
    }

    /// The credential request with the provider's proofs; the first credential, parsed.
    private func credential(_ step: IssuerStep, proofs: [String]) throws -> (text: String, sdJWT: SDJWT) {
        let delivery = try step.session.credential(accessToken: step.token.accessToken, configurationID: step.configuration.id,
                                                   identifier: step.token.credentialIdentifiers[step.configuration.id]?.first,
                                                   proofs: proofs)
        guard let text = delivery.credentials.first?.stringValue else { throw WalletError.malformed("the credential response has no credential") }
        options.log("credential: \(step.configuration.id), \(delivery.credentials.count) for \(proofs.count) proof(s) by provider-held keys")
        do { return (text, try SDJWT.parse(text)) } catch { throw WalletError.read("the PID", error) }
    }

    /// `disclose_recovery_code` of `pid`, signed by `signer`; the account state it reports.
    private func disclose(_ account: Account, pid: SDJWT, signer: HolderKey) throws -> String {
        let presentation: SDJWT
        do { presentation = try pid.presentation(disclosing: ["recovery_code"]) } catch { throw WalletError.read("the PID's disclosures", error) }
        guard !presentation.disclosures.isEmpty else { throw WalletError.malformed("the PID has no recovery_code disclosure") }
        let reply = try account.client.sendInstruction("disclose_recovery_code", params: ["sd_jwt": .string(presentation.withoutKeyBinding)],
                                                       tag: account.tag, signer: signer, hardwareKey: account.hardwareKey)
        guard reply.status == 200, let result = reply.result else {
            if reply.error == "recovery_code_mismatch" {
                options.log("disclose_recovery_code → 403 recovery_code_mismatch: the Wallet Provider keeps the account as it was")
            }
            throw WalletError.server(step: "instruction disclose_recovery_code", status: reply.status, body: reply.text)
        }
        let state = result["account_state"]?.stringValue ?? "?"
        options.log("disclose_recovery_code → recovery code \(result["recovery_code"]?.stringValue ?? "?"), account: \(state)")
        return state
    }

    /// PIN recovery (the NL wallet's PIN recovery use case, steps 1–12). Returns the summary.
    public func pinRecovery() throws -> JSONValue {
        guard let newPIN = options.newPIN, !newPIN.isEmpty else { throw WalletError.usage("--new-pin is required") }
        let http = try WalletHTTP()
        if options.verbose { http.trace = options.log }
        var account = try Account(options, http: http)
        options.log("account: \(account.lastState) (as last seen in the wallet file)")
        let step = try issuerStep(account, http: http)
        let salt = PINKey.newSalt()
        let newPINKey = try PINKey.derive(pin: newPIN, salt: salt)
        var params: [String: JSONValue] = ["pin_public_key": .object(newPINKey.jwk), "aud": .string(step.session.context.issuer.credentialIssuer),
                                           "count": .int(Int64(options.count))]
        if let nonce = step.nonce { params["c_nonce"] = .string(nonce) }
        let started = try account.client.instruction("start_pin_recovery", params: params, tag: account.tag, signer: newPINKey,
                                                     hardwareKey: account.hardwareKey)
        let proofs = started["proofs"]?.arrayValue?.compactMap(\.stringValue) ?? []
        options.log("start_pin_recovery → account: \(started["previous_state"]?.stringValue ?? "?") → \(started["state"]?.stringValue ?? "?"), "
                    + "\(proofs.count) recovery key(s), PIN certificate, wallet attestation")
        // A run cut short after this point is simply run again: start_pin_recovery is accepted
        // in recovering_pin and replaces the pending PIN key and the unused recovery keys.
        account.file.nl["account_state"] = started["state"] ?? "recovering_pin"
        try account.file.save()
        let (_, pid) = try credential(step, proofs: proofs)
        let state = try disclose(account, pid: pid, signer: newPINKey)
        account.file.nl["pin_salt"] = .string(Base64URL.encode(salt))
        account.file.nl["pin_public_key"] = .object(newPINKey.jwk)
        account.file.nl["account_state"] = .string(state)
        for (name, member) in [("pin_certificate", "pin_certificate"), ("wallet_attestation", "wallet_attestation"),
                               ("wallet_attestation_key_id", "wallet_attestation_key_id")] {
            if let value = started[member] { account.file.nl[name] = value }
        }
        try account.file.save()
        return ["account_state": .string(state), "wallet": .string(account.file.path), "pin_recovered": .bool(state == "active")]
    }

    /// PID renewal (steps 1–8), signed by the current PIN. Returns the summary.
    public func renew(pin: String) throws -> JSONValue {
        let http = try WalletHTTP()
        if options.verbose { http.trace = options.log }
        var account = try Account(options, http: http)
        options.log("account: \(account.lastState) (as last seen in the wallet file)")
        let pinKey = try account.pinKey(pin)
        let step = try issuerStep(account, http: http)
        var params: [String: JSONValue] = ["renewal": true, "aud": .string(step.session.context.issuer.credentialIssuer),
                                           "count": .int(Int64(options.count))]
        if let nonce = step.nonce { params["nonce"] = .string(nonce) }
        let made = try account.client.instruction("create_proofs", params: params, tag: account.tag, signer: pinKey,
                                                  hardwareKey: account.hardwareKey)
        let proofs = made["proofs"]?.arrayValue?.compactMap(\.stringValue) ?? []
        options.log("create_proofs {renewal} → account: renewing, \(proofs.count) new key(s), the others disabled")
        account.file.nl["account_state"] = "renewing"
        try account.file.save()
        let (text, pid) = try credential(step, proofs: proofs)
        let state = try disclose(account, pid: pid, signer: pinKey)
        var entry: [String: JSONValue] = ["credential_configuration_id": .string(step.configuration.id), "format": "dc+sd-jwt",
                                          "credential": .string(text), "received_at": .int(WalletProofs.now())]
        if let claims = try? pid.holderClaims() { entry["claims"] = .object(claims) }
        if let keys = made["keys"]?.arrayValue { entry["held_key_ids"] = .array(keys.compactMap { $0["key_id"] }) }
        account.file.credentials.append(.object(entry))
        account.file.nl["account_state"] = .string(state)
        try account.file.save()
        return ["account_state": .string(state), "wallet": .string(account.file.path), "stored": .string(step.configuration.id)]
    }
}
