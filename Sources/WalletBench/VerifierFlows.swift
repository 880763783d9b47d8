import Cryptography
import Foundation
import JSON
import Support
import Wallet

/// Benchmark-only. What the verifier flows share: the relying party, its admin token, the
/// wallet file's credentials and, for `apple`, the merchant's recipient certificate.
struct VerifierSetup {
    let verifier: String
    let adminToken: String
    let wallet: TestWalletFile
    /// Its credentials decoded once, as `wallet present` decodes them once per run.
    let credentials: WalletCredentials
    /// The body of `POST <rp>/admin/presentation-requests` (a template or a DCQL query).
    let requestBody: JSONValue
    let merchantID: String
    let teamID: String
    let recipient: PublicKey?
    let mdoc: StoredMDoc?
    /// Requests each thread makes and fetches before the clock starts (0: one per iteration).
    let prepare: Int
    /// What the threads prepared, posted by whichever thread is free (see `PreparedAnswers`).
    let prepared = PreparedAnswers<(request: PresentationRequest, form: [(String, String)])>()

    /// The DCQL queries the flows ask: name and birth date of the SD-JWT VC PID (a template the
    /// pages offer too), and the same three elements of the mdoc PID.
    static func requestBody(flow: BenchFlow, responseMode: String?) -> JSONValue {
        var body: [String: JSONValue]
        if flow == .presentMDoc {
            let docType = "eu.europa.ec.eudi.pid.1"
            body = ["dcql_query": ["credentials": [[
                "id": "pid", "format": "mso_mdoc", "meta": ["doctype_value": .string(docType)],
                "claims": .array(["family_name", "given_name", "birth_date"].map { ["path": [.string(docType), .string($0)]] }),
            ]]]]
        } else {
            body = ["template": "name_and_birth_date"]
        }
        if let responseMode { body["response_mode"] = .string(responseMode) }
        return .object(body)
    }
}

/// `--flow present-sdjwt | present-mdoc`: per iteration, the relying party's request through the
/// admin API (as an RP's backend makes one per person), then exactly `wallet present`'s steps
/// (`WalletPresenter`): the request object fetched and checked, the answer built, the response
/// posted. The verifier answers 200 only when every check passed, so each 200 is one verified
/// presentation (`verified`). With `--prepare N` each thread makes and fetches N requests and
/// makes the wallet's answer to each before the clock starts (each answer bound to its own
/// request's nonce and state, posted once: nothing is replayed), so the timed iteration is the
/// POST to the `response_uri` and the verifier's verification alone; the threads stop when all
/// of them are used up (`PreparedAnswers`). The answers must reach the verifier within its key binding window
/// (`key_binding_max_age`, 300 s by default: `iat` is set when the answer is made).
final class PresentationWorker: FlowWorker {
    let setup: VerifierSetup
    let http: WalletHTTP
    let presenter: WalletPresenter
    let adminHeaders: [String]

    init(setup: VerifierSetup, http: WalletHTTP) throws {
        self.setup = setup
        self.http = http
        presenter = WalletPresenter(http: http)
        adminHeaders = ["Authorization: Bearer \(setup.adminToken)"]
        var answers: [(request: PresentationRequest, form: [(String, String)])] = []
        for _ in 0..<setup.prepare {
            let request = try presenter.fetchRequest(link: try createRequest())
            answers.append((request, try presenter.answer(request, credentials: setup.credentials)))
        }
        setup.prepared.add(answers)
    }

    /// The relying party's request: `POST <rp>/admin/presentation-requests` (201) → its link.
    private func createRequest() throws -> String {
        let reply = try http.postJSON(setup.verifier + "/admin/presentation-requests", setup.requestBody, headers: adminHeaders)
        guard reply.status == 201, let link = reply.json?["request_link"]?.stringValue else {
            throw WalletError.server(step: "presentation request", status: reply.status, body: reply.text)
        }
        return link
    }

    func run(iteration: Int, step: inout BenchRun.Step, totals: inout BenchRun.Totals) throws {
        var started = DispatchTime.now()
        let request: PresentationRequest
        let form: [(String, String)]
        if setup.prepare > 0 {
            guard let next = setup.prepared.take() else { throw BenchRun.Exhausted() }
            (request, form) = next
        } else {
            step = .presentationRequest
            let link = try createRequest()
            totals.record(.presentationRequest, since: &started)
            step = .requestObject
            request = try presenter.fetchRequest(link: link)
            totals.record(.requestObject, since: &started)
            step = .answer
            form = try presenter.answer(request, credentials: setup.credentials)
            totals.record(.answer, since: &started)
        }

        step = .response
        _ = try presenter.post(form, to: request)
        totals.record(.response, since: &started)
        totals.verified += 1
    }
}

/// `--prepare`'s answers, one pool for all threads: a thread takes the next one whoever made
/// it. libmicrohttpd keeps each keep-alive connection on the worker thread that accepted it,
/// and the accepts split the client's connections unevenly (e.g. 6 and 10 of 16); when each
/// thread posted only its own answers, the threads of the worker with fewer connections were
/// done first and that worker's core then idled while the other served the rest alone, about a
/// third of the run (docs/performance.md, Issue 22). From one pool every connection stays
/// busy until the last answers.
final class PreparedAnswers<Answer> {
    private let answers = Locked<[Answer]>([])

    func add(_ more: [Answer]) { answers.withLock { $0 += more } }

    /// The next answer to post (the order does not matter: each is bound to its own request),
    /// nil once all are taken.
    func take() -> Answer? { answers.withLock { $0.popLast() } }
}

/// Its one stored property is the lock-guarded array; each answer moves to the thread taking it.
extension PreparedAnswers: Sendable where Answer: Sendable {}

/// `--flow apple`: per iteration a fresh nonce, the envelope `wallet apple-envelope` makes
/// (device signature over the Apple SessionTranscript, HPKE seal to the merchant's
/// certificate), posted to `<rp>/apple/identity`; counted verified when the report says so.
final class AppleEnvelopeWorker: FlowWorker {
    let setup: VerifierSetup
    let http: WalletHTTP
    let mdoc: StoredMDoc
    let recipient: PublicKey
    let selection: [String: Set<String>]?

    init(setup: VerifierSetup, http: WalletHTTP) throws {
        guard let mdoc = setup.mdoc, let recipient = setup.recipient else { throw WalletError.usage("--flow apple needs an mdoc PID") }
        self.setup = setup
        self.http = http
        self.mdoc = mdoc
        self.recipient = recipient
        selection = mdoc.selection(["family_name", "given_name", "birth_date"])
    }

    func run(iteration: Int, step: inout BenchRun.Step, totals: inout BenchRun.Totals) throws {
        var started = DispatchTime.now()
        step = .envelope
        let nonce = SecureRandom.bytes(16)
        let envelope = try AppleEnvelopeMaker.make(mdoc: mdoc, elements: selection, recipient: recipient, nonce: nonce,
                                                   merchantID: setup.merchantID, teamID: setup.teamID)
        let body: JSONValue = ["envelope": .string(Data(envelope).base64EncodedString()), "nonce": .string(Data(nonce).base64EncodedString())]
        totals.record(.envelope, since: &started)

        step = .identity
        let reply = try http.postJSON(setup.verifier + "/apple/identity", body)
        guard reply.status == 200 else { throw WalletError.server(step: "apple identity", status: reply.status, body: reply.text) }
        totals.record(.identity, since: &started)
        guard let report = reply.json, report["state"]?.stringValue == "verified" else {
            let failed = reply.json?["checks"]?.arrayValue?.first { $0["ok"] == .bool(false) }
            throw WalletError.verification("refused: \(failed?["name"]?.stringValue ?? "?"): \(failed?["detail"]?.stringValue ?? reply.text)")
        }
        totals.verified += 1
    }
}

extension LoadTest {
    /// The wallet file (its credentials checked for the flow), and for `apple` the recipient
    /// certificate from `<rp>/apple/encryption.pem`.
    func verifierSetup(http: WalletHTTP) throws -> VerifierSetup {
        let verifier = (options.verifier ?? "").hasSuffix("/") ? String(options.verifier!.dropLast()) : options.verifier ?? ""
        let wallet = try TestWalletFile.load(options.walletPath ?? TestWalletFile.defaultPath())
        var mdoc: StoredMDoc?
        var recipient: PublicKey?
        switch options.flow {
        case .presentSDJWT:
            guard wallet.credentials.contains(where: { $0["format"]?.stringValue == "dc+sd-jwt" }) else {
                throw WalletError.usage("\(wallet.path) holds no dc+sd-jwt credential (`trustbed wallet receive <offer> --save FILE`)")
            }
        case .presentMDoc:
            mdoc = try StoredMDoc.first(in: wallet)
        default:
            mdoc = try StoredMDoc.first(in: wallet)
            let reply = try http.get(verifier + "/apple/encryption.pem", accept: "application/x-pem-file")
            guard reply.status == 200 else {
                throw WalletError.server(step: "\(verifier)/apple/encryption.pem (is services.verifier.apple on?)", status: reply.status, body: reply.text)
            }
            do { recipient = try Certificate(pem: reply.text).publicKey() } catch {
                throw WalletError.malformed("\(verifier)/apple/encryption.pem: \(error)")
            }
        }
        return VerifierSetup(verifier: verifier, adminToken: options.adminToken, wallet: wallet, credentials: try WalletCredentials(wallet),
                             requestBody: VerifierSetup.requestBody(flow: options.flow, responseMode: options.responseMode),
                             merchantID: options.merchantID, teamID: options.teamID, recipient: recipient, mdoc: mdoc,
                             prepare: options.flow == .apple ? 0 : options.prepare)
    }
}
