import Foundation
import JSON
import Support
import Wallet

/// Benchmark-only. What every thread of an issuance flow (`plain`, `pid`) shares: the issuer
/// discovered once, the configuration, the admin API's offer request, the holder key pool.
final class IssuanceSetup: @unchecked Sendable {
    let context: IssuerContext
    let configuration: IssuerMetadata.Configuration
    let dpop: Bool
    let batch: Int
    let keys: [HolderKey]
    let verifyEvery: Int
    let acknowledged: AcknowledgementLog?
    let offers: String
    /// The same request every time, so its bytes and headers are built once.
    let offerRequest: [UInt8]
    let offerHeaders: [String]

    init(context: IssuerContext, configuration: IssuerMetadata.Configuration, adminToken: String, persona: String, dpop: Bool,
         batch: Int, keys: [HolderKey], verifyEvery: Int, acknowledged: AcknowledgementLog?) {
        self.context = context
        self.configuration = configuration
        self.dpop = dpop
        self.batch = batch
        self.keys = keys
        self.verifyEvery = verifyEvery
        self.acknowledged = acknowledged
        offers = context.issuer.credentialIssuer + "/admin/offers"
        offerRequest = JSONValue.object([
            "persona": .string(persona), "credential_configuration_ids": JSONValue([configuration.id]),
            "grant": "pre-authorized_code", "tx_code": false,
        ]).bytes
        offerHeaders = ["Content-Type: application/json", "Accept: application/json", "Authorization: Bearer \(adminToken)"]
    }

    /// The offer step: a pre-authorized offer from the admin API, and its code.
    func offerCode(http: WalletHTTP) throws -> String {
        let reply = try http.send("POST", offers, headers: offerHeaders, body: offerRequest)
        guard reply.status == 201, let offer = reply.json(Self.offerMembers)?["credential_offer"] else {
            throw WalletError.server(step: "admin offers", status: reply.status, body: reply.text)
        }
        return try Self.preAuthorizedCode(in: offer, issuer: context.issuer.credentialIssuer, configuration: configuration.id)
    }

    /// The steps every pre-authorized flow starts with, each timed: an offer's code from the
    /// admin API, the token for it, and a `c_nonce`.
    func tokenAndNonce(http: WalletHTTP, session: WalletSession, step: inout BenchRun.Step, totals: inout BenchRun.Totals,
                       started: inout DispatchTime) throws -> (TokenResponse, String?) {
        step = .offer
        let code = try offerCode(http: http)
        totals.record(.offer, since: &started)

        step = .token
        let token = try session.preAuthorizedToken(code: code, txCode: nil)
        totals.record(.token, since: &started)

        step = .nonce
        let nonce = try session.nonce()
        totals.record(.nonce, since: &started)
        return (token, nonce)
    }

    /// What a flow does with the credentials it received: count, log, verify one in `verifyEvery`.
    func received(_ delivery: CredentialDelivery, keys: [HolderKey], iteration: Int, verifier: CredentialVerifier,
                  totals: inout BenchRun.Totals) throws {
        totals.credentials += delivery.credentials.count
        acknowledged?.record(delivery.credentials)
        if verifyEvery > 0, iteration % verifyEvery == 0, let first = delivery.credentials.first {
            _ = try verifier.verify(first, configuration: configuration, holders: keys)
            totals.verified += 1
        }
    }

    /// The admin API's answer also carries the offer's URLs and QR code links, which go unread.
    static let offerMembers = ResponseJSON("credential_offer")

    /// The pre-authorized code of an offer the admin API just made, which must name exactly this
    /// issuer and configuration and ask for no tx_code. Stricter than CredentialOffer(json:) for
    /// this case and lighter: no URL-shape check of an issuer already compared whole.
    static func preAuthorizedCode(in offer: JSONValue, issuer: String, configuration: String) throws -> String {
        guard offer["credential_issuer"]?.stringValue == issuer else {
            throw WalletError.malformed("the offer names credential_issuer \(offer["credential_issuer"]?.serialized() ?? "(none)"), not \(issuer)")
        }
        guard let ids = offer["credential_configuration_ids"]?.arrayValue, ids.count == 1, ids[0].stringValue == configuration else {
            throw WalletError.malformed("the offer's credential_configuration_ids are not [\"\(configuration)\"]")
        }
        guard let grant = offer["grants"]?[CredentialOffer.preAuthorizedGrant]?.objectValue,
              let code = grant["pre-authorized_code"]?.stringValue, !code.isEmpty else {
            throw WalletError.malformed("the offer has no pre-authorized code")
        }
        guard grant["tx_code"] == nil else { throw WalletError.malformed("the offer asks for a tx_code although none was requested") }
        return code
    }
}

/// `--flow plain`: admin offer → token → nonce → credential, anonymous (no client
/// authentication), DPoP with `--dpop`, holder keys from the shared pool.
final class PlainIssuanceWorker: FlowWorker {
    let setup: IssuanceSetup
    let http: WalletHTTP
    let session: WalletSession
    let verifier: CredentialVerifier

    init(setup: IssuanceSetup, http: WalletHTTP) throws {
        self.setup = setup
        self.http = http
        verifier = CredentialVerifier(http: http, trustAnchors: nil)
        // One session per thread: it keeps the servers' DPoP nonces from flow to flow, as one
        // busy wallet backend would (RFC 9449 does not bind a nonce to a key), so the
        // use_dpop_nonce round trip is paid once per thread, not per flow.
        session = try WalletSession(context: setup.context, http: http, dpop: setup.dpop)
    }

    func run(iteration: Int, step: inout BenchRun.Step, totals: inout BenchRun.Totals) throws {
        var started = DispatchTime.now()
        let (token, nonce) = try setup.tokenAndNonce(http: http, session: session, step: &step, totals: &totals, started: &started)

        step = .credential
        let (batch, pool, configuration) = (setup.batch, setup.keys, setup.configuration.id)
        let keys = (0..<batch).map { pool[(iteration * batch + $0) % pool.count] }
        let delivery = try session.credential(accessToken: token.accessToken, configurationID: configuration,
                                              identifier: token.credentialIdentifiers[configuration]?.first, keys: keys, nonce: nonce)
        totals.record(.credential, since: &started)
        try setup.received(delivery, keys: keys, iteration: iteration, verifier: verifier, totals: &totals)
    }
}

/// `--flow pid`: the attested HAIP flow (HAIP 1.0 §4.3, OpenID4VCI 1.0 Appendix D). Before the
/// clock starts each thread registers its own development instance at the Wallet Provider and
/// gets a wallet attestation for a wallet key, as a wallet does once per installation (the
/// attestation lasts `attestation_lifetime`, an hour by default). Each flow is then the
/// pre-authorized flow with the attestation and a fresh PoP at the token endpoint, DPoP, and a
/// key attestation from the provider for fresh proof keys (a real wallet's keys are new per
/// credential, and the provider records every key it attests) carried in the proofs.
final class AttestedIssuanceWorker: FlowWorker {
    let setup: IssuanceSetup
    let http: WalletHTTP
    let session: WalletSession
    let verifier: CredentialVerifier
    let provider: WalletProviderClient
    let instance: ProviderInstance

    init(setup: IssuanceSetup, http: WalletHTTP, provider: WalletProviderClient, tag: String) throws {
        self.setup = setup
        self.http = http
        self.provider = provider
        verifier = CredentialVerifier(http: http, trustAnchors: nil)
        instance = ProviderInstance(tag: tag, hardwareKey: try HolderKey())
        try provider.register(hardwareKey: instance.hardwareKey, tag: tag, integrity: "pass")
        let walletKey = try HolderKey()
        let attestations = try provider.walletAttestations(hardwareKey: instance.hardwareKey, tag: tag, walletKey: walletKey,
                                                           integrity: "pass", legacy: false)
        let client = try AttestedClient(attestation: attestations["jwt"] ?? "", key: walletKey)
        session = try WalletSession(context: setup.context, http: http, dpop: true)
        session.clientID = client.clientID
        session.clientAttestation = client.headers
    }

    func run(iteration: Int, step: inout BenchRun.Step, totals: inout BenchRun.Totals) throws {
        // Made before the clock of the first step starts: key generation is the client's cost.
        let keys = try (0..<setup.batch).map { _ in try HolderKey() }
        var started = DispatchTime.now()
        let (token, nonce) = try setup.tokenAndNonce(http: http, session: session, step: &step, totals: &totals, started: &started)

        step = .keyAttestation
        let attestation = try provider.keyAttestation(hardwareKey: instance.hardwareKey, tag: instance.tag, keys: keys, cNonce: nonce)
        totals.record(.keyAttestation, since: &started)

        step = .credential
        session.keyAttester = { _, _ in attestation }
        let configuration = setup.configuration.id
        let delivery = try session.credential(accessToken: token.accessToken, configurationID: configuration,
                                              identifier: token.credentialIdentifiers[configuration]?.first, keys: keys, nonce: nonce)
        totals.record(.credential, since: &started)
        try setup.received(delivery, keys: keys, iteration: iteration, verifier: verifier, totals: &totals)
    }
}
