import Foundation
import JSON
import Support
import Wallet

/// Benchmark-only: this target is the load client of `trustbed wallet bench` (`make bench`), not
/// a general client. Its lean HTTP/1.1 client speaks only plain http to the server under test
/// (normally on loopback); https and `--curl` runs go through `HTTPClient`.
///
/// Each iteration is one whole flow (`BenchFlow`): by default the pre-authorized flow admin
/// offer → token → nonce → credential; or one of the Wallet Provider's flows. C threads, each
/// with its own keep-alive connection and DPoP key, set up before the clock starts; holder keys
/// come from a pool generated up front so key generation does not load the client.
public struct BenchOptions {
    public var flow = BenchFlow.plain
    /// The credential issuer URL (e.g. http://127.0.0.1:8080/pid-provider); `plain` and `pid`.
    public var issuer: String
    /// The Wallet Provider's entity ID (e.g. http://127.0.0.1:8080/wallet-provider); every flow but `plain`.
    public var provider: String?
    /// Instances each thread registers before the clock starts (`attest`, `attest-legacy`).
    public var instances = 4
    /// How those instances are registered (`attest`, `attest-legacy`): `dev`, each request then
    /// carrying a development key attestation the provider makes per iteration, or `android` /
    /// `apple`, under the CLI's test roots beside `walletPath` (`trustbed wallet test-roots`),
    /// each request then carrying the hardware signature and an `integrity_assertion`.
    public var deviceFormat = "dev"
    public var adminToken: String
    public var persona = "erika"
    /// credential_configuration_id; nil: the first dc+sd-jwt configuration.
    public var configuration: String?
    public var dpop = false
    public var batch = 1
    public var concurrency = 2
    /// Iterations in all (ignored with `duration`).
    public var count = 1000
    public var duration: Double?
    /// Verify one credential in this many (0: never).
    public var verifyEvery = 1000
    /// Send every request through libcurl, as `wallet receive` does.
    public var curl = false
    public var scheduling = BenchScheduling.batch
    public var json = false
    /// Append "<status list uri> <idx>" of every SD-JWT VC received to this file, or with
    /// `register` the `hardware_key_tag` of every instance registered (204).
    public var acknowledged: String?
    /// The verifier flows: the relying party's entity ID, the wallet file holding the PIDs,
    /// the response mode the requests ask (nil: the verifier's default) and Apple's merchant.
    public var verifier: String?
    public var walletPath: String?
    public var responseMode: String?
    public var merchantID = "merchant.org.trustbed.demo"
    public var teamID = "TRUSTBED01"
    /// present-*: requests each thread makes, fetches and answers before the clock starts (0: per iteration).
    public var prepare = 0
    /// Progress and warnings (stderr in the CLI).
    public var log: @Sendable (String) -> Void = { _ in }

    public init(issuer: String, adminToken: String) {
        self.issuer = issuer
        self.adminToken = adminToken
    }

    /// The option ranges the CLI also checks.
    public func validate() throws {
        guard (1...512).contains(concurrency) else { throw WalletError.usage("--concurrency must be 1...512") }
        guard (1...1000).contains(batch) else { throw WalletError.usage("--batch must be 1...1000") }
        guard count > 0 else { throw WalletError.usage("--count must be positive") }
        guard (1...1000).contains(instances) else { throw WalletError.usage("--instances must be 1...1000") }
        if flow.needsIssuer, issuer.isEmpty { throw WalletError.usage("--flow \(flow.rawValue) needs --issuer") }
        if flow.needsIssuer, adminToken.isEmpty { throw WalletError.usage("pass --admin-token or set TRUSTBED_ADMIN_TOKEN") }
        if flow.needsProvider, (provider ?? "").isEmpty { throw WalletError.usage("--flow \(flow.rawValue) needs --provider") }
        if flow.needsVerifier, (verifier ?? "").isEmpty { throw WalletError.usage("--flow \(flow.rawValue) needs --verifier") }
        if flow.needsVerifier, flow != .apple, adminToken.isEmpty { throw WalletError.usage("pass --admin-token or set TRUSTBED_ADMIN_TOKEN") }
        if batch > 1, !flow.issuesCredentials { throw WalletError.usage("--batch applies to the plain and pid flows") }
        guard ["dev", "android", "apple"].contains(deviceFormat) else { throw WalletError.usage("--device-format must be dev, android or apple") }
        if deviceFormat != "dev", flow != .attest, flow != .attestLegacy {
            throw WalletError.usage("--device-format applies to the attest and attest-legacy flows")
        }
    }

    /// The steps the report shows: without development instances no device attestation is fetched.
    var steps: [BenchRun.Step] {
        deviceFormat == "dev" ? flow.steps : flow.steps.filter { $0 != .deviceAttestation }
    }
}

/// One load test: what it printed, and whether any flow (and credential) completed.
public struct BenchOutcome {
    public let report: String
    public let flows: Int
    public let credentials: Int
}

public struct LoadTest {
    public let options: BenchOptions

    public init(options: BenchOptions) { self.options = options }

    public func run() throws -> BenchOutcome {
        try options.validate()
        let (flow, batch, concurrency, duration, scheduling, walletLog) = (options.flow, options.batch, options.concurrency,
                                                                           options.duration, options.scheduling, options.log)
        let curl = options.curl
        let acknowledged = try options.acknowledged.map(AcknowledgementLog.init(path:))
        // Enough keys that no two concurrent requests share one; reused round-robin afterwards.
        let poolSize = max(64, concurrency * batch * 2)
        walletLog("generating \(poolSize) holder keys...")
        let pool = try (0..<poolSize).map { _ in try HolderKey() }
        let newHTTP = { try WalletHTTP(transport: curl ? nil : PlainHTTPTransport()) }
        let provider = options.provider.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? ""
        let tags = BenchTags()

        var title: String
        var configuration: IssuerMetadata.Configuration?
        let makeWorker: (Int) throws -> FlowWorker
        if flow.needsVerifier {
            let setup = try verifierSetup(http: try newHTTP())
            title = "verifier: \(setup.verifier)" + (flow == .apple ? ", merchant: \(setup.merchantID)"
                : ", request: \(setup.requestBody.serialized())" + (setup.prepare > 0 ? ", prepared per thread: \(setup.prepare)" : ""))
            walletLog("running \(flow.rawValue) against \(setup.verifier) on \(concurrency) threads...")
            makeWorker = flow == .apple
                ? { _ in try AppleEnvelopeWorker(setup: setup, http: try newHTTP()) }
                : { _ in try PresentationWorker(setup: setup, http: try newHTTP()) }
        } else if flow.needsIssuer {
            let setup = try issuanceSetup(keys: pool, acknowledged: acknowledged, http: try newHTTP())
            configuration = setup.configuration
            let chosen = setup.configuration
            title = "configuration: \(chosen.id) (\(chosen.format)), dpop: \(flow == .pid || options.dpop), batch: \(batch)"
            walletLog("running \(flow.rawValue): \(chosen.id) (\(chosen.format)) on \(concurrency) threads"
                      + (flow == .pid || options.dpop ? " with DPoP" : "") + (batch > 1 ? ", batch \(batch)" : "") + "...")
            makeWorker = flow == .pinRecovery
                ? { index in
                    let http = try newHTTP()
                    return try PINRecoveryWorker(setup: setup, http: http, provider: WalletProviderClient(provider: provider, http: http),
                                                 tag: tags.warmUp(thread: index, index: 0))
                }
                : flow == .pid
                ? { index in
                    let http = try newHTTP()
                    return try AttestedIssuanceWorker(setup: setup, http: http, provider: WalletProviderClient(provider: provider, http: http),
                                                      tag: tags.warmUp(thread: index, index: 0))
                }
                : { _ in try PlainIssuanceWorker(setup: setup, http: try newHTTP()) }
        } else {
            let (instances, deviceFormat) = (options.instances, options.deviceFormat)
            let testRoots = deviceFormat == "dev" ? nil
                : try TestDeviceAttestations(besideWallet: options.walletPath ?? TestWalletFile.defaultPath())
            title = "provider: \(provider)" + (flow == .register ? "" : ", instances per thread: \(instances) (\(deviceFormat))")
            walletLog("running \(flow.rawValue) against \(provider) on \(concurrency) threads...")
            makeWorker = flow == .sign
                ? { index in try SignWorker(client: WalletProviderClient(provider: provider, http: try newHTTP()), tag: tags.warmUp(thread: index, index: 0)) }
                : { index in
                    try ProviderWorker(flow: flow, client: WalletProviderClient(provider: provider, http: try newHTTP()), keys: pool,
                                       tags: tags, thread: index, instances: instances, acknowledged: acknowledged,
                                       deviceFormat: deviceFormat, testRoots: testRoots)
                }
        }
        title = "flow: \(flow.rawValue), " + title + ", concurrency: \(concurrency), scheduling: \(scheduling.rawValue)"

        let run = BenchRun(flow: flow, limit: duration == nil ? options.count : Int.max, makeWorker: makeWorker)
        // Every thread sets up (sessions, warm-up registrations, a wallet attestation) before
        // the clock starts; the start is given to all at once.
        let ready = DispatchGroup(), done = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        let deadline = Locked<Date?>(nil)
        for index in 0..<concurrency {
            ready.enter()
            done.enter()
            let thread = Thread { [scheduling] in
                Self.nameCurrentThread("bench-\(index)")
                if !scheduling.applyToCurrentThread(), index == 0 {
                    walletLog("warning: the system refused the \(scheduling.rawValue) scheduling policy; the threads keep the default one")
                }
                run.work(index: index, ready: { ready.leave() }, start: {
                    go.wait()
                    return deadline.current
                })
                done.leave()
            }
            thread.name = "bench-\(index)"
            thread.start()
        }
        ready.wait()
        let cpuBefore = Self.processCPUSeconds()
        let started = Date()
        deadline.withLock { $0 = duration.map { started.addingTimeInterval($0) } }
        walletLog("clock started")  // verifier.sh reads the server's CPU from here (what --prepare made is not counted)
        for _ in 0..<concurrency { go.signal() }
        done.wait()
        let text = report(run, seconds: Date().timeIntervalSince(started), cpuSeconds: Self.processCPUSeconds() - cpuBefore,
                          title: title, configuration: configuration)
        let totals = run.totals.current
        return BenchOutcome(report: text, flows: totals.flows, credentials: totals.credentials)
    }

    /// The issuer discovered once for every thread, and the configuration to ask for.
    private func issuanceSetup(keys: [HolderKey], acknowledged: AcknowledgementLog?, http: WalletHTTP) throws -> IssuanceSetup {
        let issuerURL = options.issuer.hasSuffix("/") ? String(options.issuer.dropLast()) : options.issuer
        let metadata = try IssuerMetadata.fetch(issuerURL, http: http)
        let server = metadata.authorizationServers.first ?? metadata.credentialIssuer
        let context = IssuerContext(issuer: metadata, authorizationServer: try AuthorizationServerMetadata.fetch(server, http: http))
        let chosen = try options.configuration.map { id in
            guard let found = metadata.configurations[id] else { throw WalletError.usage("the issuer has no configuration \(id)") }
            return found
        } ?? metadata.configurations.values.sorted { $0.id < $1.id }.first { $0.format == "dc+sd-jwt" }
            ?? metadata.configurations.values.sorted { $0.id < $1.id }.first
        guard let chosen else { throw WalletError.malformed("the issuer lists no credential configurations") }
        if options.batch > 1, options.batch > (metadata.batchSize ?? 1) {
            throw WalletError.usage("--batch \(options.batch) exceeds the issuer's batch_size \(metadata.batchSize ?? 1)")
        }
        return IssuanceSetup(context: context, configuration: chosen, adminToken: options.adminToken, persona: options.persona,
                             dpop: options.dpop, batch: options.batch, keys: keys, verifyEvery: options.verifyEvery,
                             acknowledged: acknowledged)
    }

    /// Names the calling thread in the kernel (Foundation's `Thread.name` is not, on Linux), so
    /// that perf, top and the interop test of the scheduling policy can tell the client threads.
    /// pthread_setname_np is a GNU extension Glibc's Swift module does not export.
    public static func nameCurrentThread(_ name: String) {
        #if os(Linux)
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = name.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, min($0.count - 1, 15)) }
        close(fd)
        #endif
    }

    /// User plus system CPU time of this process so far (getrusage(2)).
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
        let who = RUSAGE_SELF.rawValue
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return 0 }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// `cpuSeconds` is the client's own CPU during the run: on shared cores every millisecond of it
    /// is taken from the server, so the report shows it per flow.
    private func report(_ run: BenchRun, seconds: Double, cpuSeconds: Double, title: String,
                        configuration: IssuerMetadata.Configuration?) -> String {
        let (flow, batch, concurrency, scheduling) = (options.flow, options.batch, options.concurrency, options.scheduling)
        let dpop = options.dpop || flow == .pid
        let totals = run.totals.current
        let rate = Double(totals.credentials) / max(seconds, 0.001)
        let flowRate = Double(totals.flows) / max(seconds, 0.001)
        let cpuPerFlow = totals.flows > 0 ? cpuSeconds * 1000 / Double(totals.flows) : 0
        var steps: [String: JSONValue] = [:]
        var lines = [title, String(format: "flows: %d in %.2f s = %.1f flows/s", totals.flows, seconds, flowRate)]
        if flow.issuesCredentials {
            lines.append(String(format: "credentials: %d in %.2f s = %.1f credentials/s (%d flows)", totals.credentials, seconds, rate,
                                totals.flows))
        }
        for step in options.steps {
            let samples = totals.latencies[step.index].sorted()
            let p50 = Self.percentile(samples, 0.50), p99 = Self.percentile(samples, 0.99)
            steps[step.rawValue] = ["count": JSONValue(samples.count), "p50_ms": .double(p50), "p99_ms": .double(p99)]
            let name = step.rawValue.padding(toLength: 18, withPad: " ", startingAt: 0)
            lines.append("  \(name) " + String(format: "count %7d  p50 %8.2f ms  p99 %8.2f ms", samples.count, p50, p99))
        }
        lines.append(String(format: "client CPU: %.2f s, %.3f ms per flow", cpuSeconds, cpuPerFlow))
        if flow.issuesCredentials { lines.append("verified samples: \(totals.verified)") }
        if flow.needsVerifier {
            lines.insert(String(format: "verified: %d in %.2f s = %.1f verified/s", totals.verified, seconds,
                                Double(totals.verified) / max(seconds, 0.001)), at: 2)
        }
        if totals.errors.isEmpty {
            lines.append("errors: none")
        } else {
            lines.append("errors:")
            for (kind, n) in totals.errors.sorted(by: { $0.value > $1.value }) { lines.append("  \(n) × \(kind)") }
        }
        if options.json {
            var document: [String: JSONValue] = [
                "flow": .string(flow.rawValue), "concurrency": JSONValue(concurrency), "scheduling": .string(scheduling.rawValue),
                "flows": JSONValue(totals.flows), "seconds": .double(seconds), "flows_per_second": .double(flowRate),
                "steps": .object(steps), "client_cpu_seconds": .double(cpuSeconds), "client_cpu_ms_per_flow": .double(cpuPerFlow),
                "errors": .object(totals.errors.mapValues { JSONValue($0) }),
            ]
            if let configuration {
                document["credential_configuration_id"] = .string(configuration.id)
                document["format"] = .string(configuration.format)
                document["dpop"] = .bool(dpop)
                document["batch"] = JSONValue(batch)
                document["credentials"] = JSONValue(totals.credentials)
                document["credentials_per_second"] = .double(rate)
                document["verified_samples"] = JSONValue(totals.verified)
            }
            if flow.needsVerifier {
                document["verifier"] = .string(options.verifier ?? "")
                document["verified"] = JSONValue(totals.verified)
                document["verified_per_second"] = .double(Double(totals.verified) / max(seconds, 0.001))
            }
            if flow.needsProvider { document["provider"] = .string(options.provider ?? "") }
            if flow == .attest || flow == .attestLegacy {
                document["instances_per_thread"] = JSONValue(options.instances)
                document["device_format"] = .string(options.deviceFormat)
            }
            return JSONValue.object(document).serialized(pretty: true)
        }
        return lines.joined(separator: "\n")
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        // Nearest rank: the smallest sample with at least p of all samples at or below it.
        let rank = Int((Double(sorted.count) * p).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}
