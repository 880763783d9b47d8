import ArgumentParser
import Foundation
import Wallet
import WalletBench

/// `trustbed wallet`: an OpenID4VCI 1.0 wallet for testing issuers. The commands only parse
/// arguments and print; the wallet is the `Wallet` library, the load client `WalletBench`.
struct WalletCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wallet",
        abstract: "A test wallet: receive credentials from any OpenID4VCI 1.0 issuer, or load-test one.",
        subcommands: [WalletReceiveCommand.self, WalletRegisterCommand.self, WalletAttestCommand.self, WalletTestRootsCommand.self,
                      WalletPresentCommand.self, WalletBenchCommand.self, WalletAppleEnvelopeCommand.self, WalletQRCommand.self,
                      WalletInstructCommand.self, WalletPINRecoveryCommand.self, WalletRenewCommand.self, WalletTransferCommand.self])
}

/// Prints to stderr (progress and prompts; stdout carries only the result).
@Sendable func walletLog(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Runs a wallet command's work, turning any failure into a message on stderr and exit status 1.
func runWalletCommand(_ body: () throws -> Void) throws {
    do { try body() } catch let exit as ExitCode { throw exit } catch {
        walletLog("error: \(error)")
        throw ExitCode(1)
    }
}

struct WalletReceiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Run a credential offer end to end, verify what arrives and print it.",
        discussion: """
        <offer> is an openid-credential-offer:// URL (credential_offer or credential_offer_uri), an https \
        credential_offer_uri, or the offer JSON. The wallet uses the pre-authorized_code grant when offered, \
        else the authorization_code grant (PKCE, PAR when advertised). Exit status 0 only when every \
        credential arrived and verified.
        """)

    @Argument(help: "The credential offer (URL, credential_offer_uri or JSON).") var offer: String
    @Option(name: .customLong("tx-code"), help: "The transaction code (asked on stdin when the offer needs one).") var txCode: String?
    @Flag(help: "Use DPoP-bound tokens (RFC 9449). Without it DPoP is still used when the server insists.") var dpop = false
    @Option(help: "Which offered credentials: dc+sd-jwt, mso_mdoc or a credential_configuration_id (repeatable; default: all).")
    var format: [String] = []
    @Option(help: "Credentials per configuration, one proof key each (batch issuance).") var batch = 1
    @Option(help: "pre-authorized_code or authorization_code (default: what the offer grants, pre-authorized first).") var grant: String?
    @Option(name: .customLong("login-hint"), help: "login_hint for the authorization request (a persona id on Trustbed).") var loginHint: String?
    @Option(name: .customLong("client-id"), help: "client_id (authorization code flow; sent with pre-authorized only when given).")
    var clientID: String?
    @Option(name: .customLong("redirect-uri"), help: "redirect_uri for the authorization code flow.")
    var redirectURI = "http://127.0.0.1/trustbed-wallet/callback"
    @Option(help: "IACA certificate(s) to trust: a PEM file or an http(s) URL. Signer chains must lead to one.") var trust: String?
    @Flag(name: .customLong("no-status"), help: "Do not fetch the status lists.") var noStatus = false
    @Flag(help: "Print one JSON document instead of text.") var json = false
    @Flag(help: "Log every request and response (method, URL, headers, body) to stderr.") var verbose = false
    @Option(help: "The test wallet file (default: $XDG_DATA_HOME/trustbed/wallet.json).") var wallet: String?
    @Flag(name: .customLong("client-attestation"),
          help: "Authenticate with the wallet file's wallet attestation + PoP at PAR and the token endpoint (client_id = its sub); store the credentials in the wallet file.")
    var clientAttestation = false
    @Flag(name: .customLong("key-attestation"),
          help: "Ask the wallet's Wallet Provider for a key attestation of the proof keys (with the issuer's c_nonce) and send it in each proof's key_attestation header.")
    var keyAttestation = false
    @Option(help: "Store the credentials with their holder keys in this test wallet file (created when absent), for `wallet present`.")
    var save: String?

    func validate() throws {
        guard (1...1000).contains(batch) else { throw ValidationError("--batch must be between 1 and 1000") }
        if let grant, ![CredentialOffer.preAuthorizedGrant, "pre-authorized_code", "authorization_code"].contains(grant) {
            throw ValidationError("--grant must be pre-authorized_code or authorization_code")
        }
    }

    func run() throws {
        var options = ReceiveOptions(offer: offer)
        options.txCode = txCode
        options.dpop = dpop
        options.format = format
        options.batch = batch
        options.grant = grant
        options.loginHint = loginHint
        options.clientID = clientID
        options.redirectURI = redirectURI
        options.trust = trust
        options.checkStatus = !noStatus
        options.verbose = verbose
        options.walletPath = wallet
        options.clientAttestation = clientAttestation
        options.keyAttestation = keyAttestation
        options.savePath = save
        options.log = walletLog
        options.ask = { prompt in
            FileHandle.standardError.write(Data(prompt.utf8))
            return readLine(strippingNewline: true)
        }
        do {
            let result = try WalletReceiver(options: options).run()
            print(json ? result.json.serialized(pretty: true) : result.text)
        } catch {
            walletLog("error: \(error)")
            throw ExitCode(1)
        }
    }
}

extension BenchScheduling: ExpressibleByArgument {}
extension BenchFlow: ExpressibleByArgument {}

struct WalletBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load-test an issuer (offer → token → nonce → credential), a Wallet Provider or a verifier, on C threads.",
        discussion: """
        --flow plain (default): the pre-authorized flow at --issuer. register: nonce → development key attestation → \
        registration at --provider. attest / attest-legacy: nonce → development key attestation → wallet attestation \
        (/wallet-attestations, or /token with the jwt-bearer grant) for instances each thread registers before the \
        clock starts. pid: the attested HAIP flow at --issuer (e.g. pid-provider-haip): each thread registers an \
        instance at --provider and gets a wallet attestation first; each flow sends it with a PoP at the token \
        endpoint, uses DPoP, and carries a key attestation from the provider in its proofs. present-sdjwt / \
        present-mdoc: a presentation request through --verifier's admin API, then what `wallet present` does \
        (request object, answer from the --wallet file's PID, response); apple: an Apple identity envelope from \
        the wallet's mdoc PID posted to <verifier>/apple/identity. They count verified answers.
        """)

    @Option(help: "What each iteration does: plain, register, attest, attest-legacy, pid, present-sdjwt, present-mdoc, apple or sign (an NL account's sign instruction: challenge + instruction).") var flow = BenchFlow.plain
    @Option(help: "The credential issuer URL (e.g. http://127.0.0.1:8080/pid-provider); the plain and pid flows.") var issuer: String?
    @Option(help: "The Wallet Provider's entity ID (e.g. http://127.0.0.1:8080/wallet-provider); every flow but plain.")
    var provider: String?
    @Option(help: "The verifier's (relying party's) entity ID, e.g. http://127.0.0.1:8080/relying-party; the present-sdjwt, present-mdoc and apple flows.")
    var verifier: String?
    @Option(help: "The test wallet file holding the PIDs the verifier flows present (`wallet receive --save FILE`); with --device-format android or apple, the test roots are beside it.") var wallet: String?
    @Option(name: .customLong("response-mode"), help: "direct_post or direct_post.jwt for the presentation requests (default: the verifier's).")
    var responseMode: String?
    @Option(name: .customLong("merchant-id"), help: "Apple merchant identifier (--flow apple; the demo's by default).")
    var merchantID = "merchant.org.trustbed.demo"
    @Option(name: .customLong("team-id"), help: "Apple team identifier (--flow apple; the demo's by default).") var teamID = "TRUSTBED01"
    @Option(help: ArgumentHelp("present-sdjwt / present-mdoc: requests each thread makes, fetches and answers before the clock starts (0: one per iteration).",
                               discussion: "With N > 0 the timed iterations are the POST of a prepared answer and its verification alone, and the threads post them from one pool until all are posted."))
    var prepare = 0
    @Option(help: "Instances each thread registers before the clock starts (attest, attest-legacy).") var instances = 4
    @Option(name: .customLong("device-format"),
            help: ArgumentHelp("attest, attest-legacy: register those instances as dev, android or apple devices.",
                               discussion: "dev: each iteration fetches a development key attestation for its nonce. android / apple: the instances are registered under the CLI's test roots beside --wallet (`wallet test-roots`; the provider must trust them), and each iteration is nonce → wallet attestation with an integrity_assertion, as a phone's."))
    var deviceFormat = "dev"
    @Option(name: .customLong("admin-token"), help: "Admin token (default: the TRUSTBED_ADMIN_TOKEN variable).") var adminToken: String?
    @Option(help: "Persona id for the offers.") var persona = "erika"
    @Option(help: "credential_configuration_id (default: the first dc+sd-jwt configuration).") var configuration: String?
    @Flag(help: "DPoP-bound tokens.") var dpop = false
    @Option(help: "Proofs (credentials) per request.") var batch = 1
    @Option(help: "Client threads.") var concurrency = 2
    @Option(help: "Iterations in all (ignored with --duration).") var count = 1000
    @Option(help: "Run for this many seconds instead of --count iterations.") var duration: Double?
    @Option(name: .customLong("verify-every"), help: "Verify one credential in this many (0: never).") var verifyEvery = 1000
    @Flag(help: ArgumentHelp("Send every request through libcurl, as `wallet receive` does.",
                             discussion: "By default http:// issuers get the benchmark's lean keep-alive HTTP/1.1 client, which leaves more of the machine's CPU to the issuer; https always uses libcurl."))
    var curl = false
    @Option(help: ArgumentHelp("Scheduling policy of the client threads: batch or normal.",
                               discussion: "batch (Linux SCHED_BATCH): a client thread woken by a response does not preempt the issuer's running thread on a shared core; normal: the default policy."))
    var scheduling = BenchScheduling.batch
    @Flag(help: "Print the report as JSON.") var json = false
    @Option(help: ArgumentHelp("Append \"<status list uri> <idx>\" of every SD-JWT VC received to this file (--flow register: the hardware_key_tag of every instance registered).",
                               discussion: "The kill -9 checks compare it with the server's records after a restart."))
    var acknowledged: String?

    func validate() throws {
        guard (1...512).contains(concurrency) else { throw ValidationError("--concurrency must be 1...512") }
        guard (1...1000).contains(batch) else { throw ValidationError("--batch must be 1...1000") }
        guard count > 0 else { throw ValidationError("--count must be positive") }
        guard (1...1000).contains(instances) else { throw ValidationError("--instances must be 1...1000") }
        guard ["dev", "android", "apple"].contains(deviceFormat) else { throw ValidationError("--device-format must be dev, android or apple") }
        if flow.needsIssuer, issuer == nil { throw ValidationError("--flow \(flow.rawValue) needs --issuer") }
        if flow.needsProvider, provider == nil { throw ValidationError("--flow \(flow.rawValue) needs --provider") }
        guard (0...100_000).contains(prepare) else { throw ValidationError("--prepare must be 0...100000") }
        if flow.needsVerifier, verifier == nil { throw ValidationError("--flow \(flow.rawValue) needs --verifier") }
        if let responseMode, !["direct_post", "direct_post.jwt"].contains(responseMode) {
            throw ValidationError("--response-mode must be direct_post or direct_post.jwt")
        }
    }

    func run() throws {
        var options = BenchOptions(issuer: issuer ?? "",
                                   adminToken: adminToken ?? ProcessInfo.processInfo.environment["TRUSTBED_ADMIN_TOKEN"] ?? "")
        options.flow = flow
        options.provider = provider
        options.instances = instances
        options.deviceFormat = deviceFormat
        options.persona = persona
        options.configuration = configuration
        options.dpop = dpop
        options.batch = batch
        options.concurrency = concurrency
        options.count = count
        options.duration = duration
        options.verifyEvery = verifyEvery
        options.curl = curl
        options.scheduling = scheduling
        options.json = json
        options.acknowledged = acknowledged
        options.verifier = verifier
        options.walletPath = wallet
        options.responseMode = responseMode
        options.merchantID = merchantID
        options.teamID = teamID
        options.prepare = prepare
        options.log = walletLog
        let outcome: BenchOutcome
        do { outcome = try LoadTest(options: options).run() } catch {
            walletLog("error: \(error)")
            throw ExitCode(1)
        }
        print(outcome.report)
        if outcome.flows == 0 || (flow.issuesCredentials && outcome.credentials == 0) { throw ExitCode(1) }
    }
}
