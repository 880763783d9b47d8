import ArgumentParser
import Foundation
import JSON
import Support

/// `trustbed wallet bench`: the native load client (issue 7 item 16). Each iteration is the whole
/// pre-authorized flow: admin offer → token → nonce → credential. C threads, each with its own
/// keep-alive connection (PlainHTTPConnection for http://, libcurl for https) and DPoP key; holder keys come from a pool generated up
/// front so key generation does not load the client.
struct WalletBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load-test an issuer: offer → token → nonce → credential, on C threads.")

    @Option(help: "The credential issuer URL (e.g. http://127.0.0.1:8080/pid-provider).") var issuer: String
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
                             discussion: "By default http:// issuers get the lean keep-alive client (PlainHTTPConnection), which leaves more of the machine's CPU to the issuer; https always uses libcurl."))
    var curl = false
    @Flag(help: "Print the report as JSON.") var json = false
    @Option(help: ArgumentHelp("Append \"<status list uri> <idx>\" of every SD-JWT VC received to this file.",
                               discussion: "The benchmark's kill -9 check compares it with the issuer's records after a restart."))
    var acknowledged: String?

    func validate() throws {
        guard (1...512).contains(concurrency) else { throw ValidationError("--concurrency must be 1...512") }
        guard (1...1000).contains(batch) else { throw ValidationError("--batch must be 1...1000") }
        guard count > 0 else { throw ValidationError("--count must be positive") }
    }

    func run() throws {
        do {
            try bench()
        } catch {
            walletLog("error: \(error)")
            throw ExitCode(1)
        }
    }

    private func bench() throws {
        guard let token = adminToken ?? ProcessInfo.processInfo.environment["TRUSTBED_ADMIN_TOKEN"], !token.isEmpty else {
            throw WalletError.usage("pass --admin-token or set TRUSTBED_ADMIN_TOKEN")
        }
        let issuerURL = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        let http = try WalletHTTP(plainConnections: !curl)
        let metadata = try IssuerMetadata.fetch(issuerURL, http: http)
        let server = metadata.authorizationServers.first ?? metadata.credentialIssuer
        let context = IssuerContext(issuer: metadata, authorizationServer: try AuthorizationServerMetadata.fetch(server, http: http))
        let chosen = try configuration.map { id in
            guard let found = metadata.configurations[id] else { throw WalletError.usage("the issuer has no configuration \(id)") }
            return found
        } ?? metadata.configurations.values.sorted { $0.id < $1.id }.first { $0.format == "dc+sd-jwt" }
            ?? metadata.configurations.values.sorted { $0.id < $1.id }.first
        guard let chosen else { throw WalletError.malformed("the issuer lists no credential configurations") }
        if batch > 1, batch > (metadata.batchSize ?? 1) {
            throw WalletError.usage("--batch \(batch) exceeds the issuer's batch_size \(metadata.batchSize ?? 1)")
        }

        // Enough keys that no two concurrent requests share one; reused round-robin afterwards.
        let poolSize = max(64, concurrency * batch * 2)
        walletLog("generating \(poolSize) holder keys...")
        let pool = try (0..<poolSize).map { _ in try HolderKey() }
        let run = BenchRun(context: context, configuration: chosen, adminToken: token, persona: persona, dpop: dpop, batch: batch,
                           plainConnections: !curl,
                           keys: pool, limit: duration == nil ? count : Int.max, verifyEvery: verifyEvery,
                           acknowledged: try acknowledged.map(AcknowledgementLog.init(path:)))
        walletLog("running \(chosen.id) (\(chosen.format)) on \(concurrency) threads\(dpop ? " with DPoP" : "")"
                  + (batch > 1 ? ", batch \(batch)" : "") + "...")
        let started = Date()
        let deadline = duration.map { started.addingTimeInterval($0) }
        let done = DispatchGroup()
        for index in 0..<concurrency {
            done.enter()
            let thread = Thread {
                run.work(deadline: deadline)
                done.leave()
            }
            thread.name = "bench-\(index)"
            thread.start()
        }
        done.wait()
        report(run, seconds: Date().timeIntervalSince(started), configuration: chosen)
        if run.totals.current.credentials == 0 { throw ExitCode(1) }
    }

    private func report(_ run: BenchRun, seconds: Double, configuration: IssuerMetadata.Configuration) {
        let totals = run.totals.current
        let rate = Double(totals.credentials) / max(seconds, 0.001)
        var steps: [String: JSONValue] = [:]
        var lines = [
            "configuration: \(configuration.id) (\(configuration.format)), dpop: \(dpop), batch: \(batch), concurrency: \(concurrency)",
            String(format: "credentials: %d in %.2f s = %.1f credentials/s (%d flows)", totals.credentials, seconds, rate, totals.flows),
        ]
        for step in BenchRun.Step.allCases {
            let samples = (totals.latencies[step] ?? []).sorted()
            let p50 = percentile(samples, 0.50), p99 = percentile(samples, 0.99)
            steps[step.rawValue] = ["count": JSONValue(samples.count), "p50_ms": .double(p50), "p99_ms": .double(p99)]
            let name = step.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
            lines.append("  \(name) " + String(format: "count %7d  p50 %8.2f ms  p99 %8.2f ms", samples.count, p50, p99))
        }
        lines.append("verified samples: \(totals.verified)")
        if totals.errors.isEmpty {
            lines.append("errors: none")
        } else {
            lines.append("errors:")
            for (kind, n) in totals.errors.sorted(by: { $0.value > $1.value }) { lines.append("  \(n) × \(kind)") }
        }
        if json {
            let document: JSONValue = [
                "credential_configuration_id": .string(configuration.id), "format": .string(configuration.format),
                "dpop": .bool(dpop), "batch": JSONValue(batch), "concurrency": JSONValue(concurrency),
                "credentials": JSONValue(totals.credentials), "flows": JSONValue(totals.flows), "seconds": .double(seconds),
                "credentials_per_second": .double(rate), "steps": .object(steps), "verified_samples": JSONValue(totals.verified),
                "errors": .object(totals.errors.mapValues { JSONValue($0) }),
            ]
            print(document.serialized(pretty: true))
        } else {
            print(lines.joined(separator: "\n"))
        }
    }

    private func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        // Nearest rank: the smallest sample with at least p of all samples at or below it.
        let rank = Int((Double(sorted.count) * p).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}

/// The shared state of one bench run: the iteration counter and the merged results. Workers
/// keep their samples locally and merge once at the end, so the lock is not on the hot path.
final class BenchRun: @unchecked Sendable {
    enum Step: String, CaseIterable { case offer, token, nonce, credential }

    struct Totals {
        var flows = 0
        var credentials = 0
        var verified = 0
        var latencies: [Step: [Double]] = [:]
        var errors: [String: Int] = [:]
    }

    let context: IssuerContext
    let configuration: IssuerMetadata.Configuration
    let adminToken: String
    let persona: String
    let dpop: Bool
    let batch: Int
    let plainConnections: Bool
    let keys: [HolderKey]
    let limit: Int
    let verifyEvery: Int
    let acknowledged: AcknowledgementLog?
    private let next = Locked(0)
    let totals = Locked(Totals())

    init(context: IssuerContext, configuration: IssuerMetadata.Configuration, adminToken: String, persona: String, dpop: Bool,
         batch: Int, plainConnections: Bool, keys: [HolderKey], limit: Int, verifyEvery: Int, acknowledged: AcknowledgementLog?) {
        self.context = context
        self.configuration = configuration
        self.adminToken = adminToken
        self.persona = persona
        self.dpop = dpop
        self.batch = batch
        self.plainConnections = plainConnections
        self.keys = keys
        self.limit = limit
        self.verifyEvery = verifyEvery
        self.acknowledged = acknowledged
    }

    /// The next iteration number, or nil when the run is over.
    private func claim(deadline: Date?) -> Int? {
        if let deadline, Date() >= deadline { return nil }
        return next.withLock { n in
            guard n < limit else { return nil }
            n += 1
            return n - 1
        }
    }

    func work(deadline: Date?) {
        var local = Totals()
        defer { totals.withLock { merge(local, into: &$0) } }
        let http: WalletHTTP
        do { http = try WalletHTTP(plainConnections: plainConnections) } catch { local.errors["setup: \(error)", default: 0] += 1; return }
        let verifier = CredentialVerifier(http: http, trustAnchors: nil)
        // One session per thread: it keeps the servers' DPoP nonces from flow to flow, as one
        // busy wallet backend would (RFC 9449 does not bind a nonce to a key), so the
        // use_dpop_nonce round trip is paid once per thread, not per flow.
        let session: WalletSession
        do { session = try WalletSession(context: context, http: http, dpop: dpop) } catch {
            local.errors["setup: \(error)", default: 0] += 1
            return
        }
        let offers = context.issuer.credentialIssuer + "/admin/offers"
        // The same request every time, so its bytes and headers are built once.
        let request = JSONValue.object([
            "persona": .string(persona), "credential_configuration_ids": JSONValue([configuration.id]),
            "grant": "pre-authorized_code", "tx_code": false,
        ]).bytes
        let offerHeaders = ["Content-Type: application/json", "Accept: application/json", "Authorization: Bearer \(adminToken)"]
        while let iteration = claim(deadline: deadline) {
            var step = Step.offer
            do {
                var started = DispatchTime.now()
                let reply = try http.send("POST", offers, headers: offerHeaders, body: request)
                guard reply.status == 201, let offer = reply.json?["credential_offer"] else {
                    throw WalletError.server(step: "admin offers", status: reply.status, body: reply.text)
                }
                let code = try Self.preAuthorizedCode(in: offer, issuer: context.issuer.credentialIssuer, configuration: configuration.id)
                local.record(.offer, since: &started)

                step = .token
                let token = try session.preAuthorizedToken(code: code, txCode: nil)
                local.record(.token, since: &started)

                step = .nonce
                let nonce = try session.nonce()
                local.record(.nonce, since: &started)

                step = .credential
                let keys = (0..<batch).map { self.keys[(iteration * batch + $0) % self.keys.count] }
                let delivery = try session.credential(accessToken: token.accessToken, configurationID: configuration.id,
                                                      identifier: token.credentialIdentifiers[configuration.id]?.first,
                                                      keys: keys, nonce: nonce)
                local.record(.credential, since: &started)
                local.flows += 1
                local.credentials += delivery.credentials.count
                acknowledged?.record(delivery.credentials)
                if verifyEvery > 0, iteration % verifyEvery == 0, let first = delivery.credentials.first {
                    _ = try verifier.verify(first, configuration: configuration, holders: keys)
                    local.verified += 1
                }
            } catch let error as WalletError {
                local.errors[Self.kind(of: error, step: step), default: 0] += 1
            } catch {
                local.errors["\(step.rawValue): \(error)", default: 0] += 1
            }
        }
    }

    /// The pre-authorized code of an offer the admin API just made, which must name exactly this
    /// issuer and configuration and ask for no tx_code. Stricter than CredentialOffer(json:) for
    /// this case and lighter: its URL-shape check of credential_issuer cost 30,000 instructions a
    /// flow, more than this whole function.
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

    /// Groups errors by step and OAuth error code, not by their (unique) descriptions.
    static func kind(of error: WalletError, step: Step) -> String {
        switch error {
        case .server(_, let status, let body):
            let code = (try? JSONValue.parse(body))?["error"]?.stringValue
            return "\(step.rawValue): HTTP \(status)" + (code.map { " \($0)" } ?? "")
        case .transport(let why): return "\(step.rawValue): transport: \(why.split(separator: ":").last.map(String.init) ?? why)"
        default: return "\(step.rawValue): \(error)"
        }
    }

    private func merge(_ local: Totals, into totals: inout Totals) {
        totals.flows += local.flows
        totals.credentials += local.credentials
        totals.verified += local.verified
        for (step, samples) in local.latencies { totals.latencies[step, default: []] += samples }
        for (kind, n) in local.errors { totals.errors[kind, default: 0] += n }
    }
}

extension BenchRun.Totals {
    /// Milliseconds since `start`, which then moves to now (the next step's start).
    mutating func record(_ step: BenchRun.Step, since start: inout DispatchTime) {
        let now = DispatchTime.now()
        latencies[step, default: []].append(Double(now.uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000)
        start = now
    }
}

/// The status list entries of the SD-JWT VCs a bench run received, one line each, written with
/// one unbuffered write(2) per delivery, so the file is complete whatever happens to the server.
final class AcknowledgementLog: Sendable {
    private let descriptor: Locked<Int32>

    init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ValidationError("cannot open \(path)") }
        descriptor = Locked(fd)
    }

    func record(_ credentials: [JSONValue]) {
        var text = ""
        for credential in credentials {
            guard let sdJWT = credential["credential"]?.stringValue ?? credential.stringValue,
                  let payload = sdJWT.split(separator: "~").first?.split(separator: ".").dropFirst().first,
                  let bytes = Base64URL.decode(String(payload)), let claims = try? JSONValue.parse(bytes),
                  let list = claims["status"]?["status_list"], let uri = list["uri"]?.stringValue, let index = list["idx"]?.intValue
            else { continue }
            text += "\(uri) \(index)\n"
        }
        guard !text.isEmpty else { return }
        descriptor.withLock { fd in _ = text.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) } }
    }
}
