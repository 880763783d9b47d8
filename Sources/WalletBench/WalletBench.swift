import Foundation
import JSON
import Support
import Wallet

/// Benchmark-only: this target is the load client of `trustbed wallet bench` (`make bench`), not
/// a general client. Its lean HTTP/1.1 client speaks only plain http to the issuer under test
/// (normally on loopback); https and `--curl` runs go through `HTTPClient`.
///
/// Each iteration is the whole pre-authorized flow: admin offer → token → nonce → credential. C
/// threads, each with its own keep-alive connection and DPoP key; holder keys come from a pool
/// generated up front so key generation does not load the client.
public struct BenchOptions {
    /// The credential issuer URL (e.g. http://127.0.0.1:8080/pid-provider).
    public var issuer: String
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
    /// Append "<status list uri> <idx>" of every SD-JWT VC received to this file.
    public var acknowledged: String?
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
    }
}

/// One load test: what it printed, and whether any credential arrived.
public struct BenchOutcome {
    public let report: String
    public let credentials: Int
}

public struct LoadTest {
    public let options: BenchOptions

    public init(options: BenchOptions) { self.options = options }

    public func run() throws -> BenchOutcome {
        try options.validate()
        let (issuer, token, configuration, dpop, batch, concurrency) = (options.issuer, options.adminToken, options.configuration,
                                                                        options.dpop, options.batch, options.concurrency)
        let (curl, duration, scheduling, walletLog) = (options.curl, options.duration, options.scheduling, options.log)
        guard !token.isEmpty else { throw WalletError.usage("pass --admin-token or set TRUSTBED_ADMIN_TOKEN") }
        let issuerURL = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        let http = try WalletHTTP(transport: curl ? nil : PlainHTTPTransport())
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
        let run = BenchRun(context: context, configuration: chosen, adminToken: token, persona: options.persona, dpop: dpop,
                           batch: batch, plainConnections: !curl, keys: pool, limit: duration == nil ? options.count : Int.max,
                           verifyEvery: options.verifyEvery, acknowledged: try options.acknowledged.map(AcknowledgementLog.init(path:)))
        walletLog("running \(chosen.id) (\(chosen.format)) on \(concurrency) threads\(dpop ? " with DPoP" : "")"
                  + (batch > 1 ? ", batch \(batch)" : "") + "...")
        let cpuBefore = Self.processCPUSeconds()
        let started = Date()
        let deadline = duration.map { started.addingTimeInterval($0) }
        let done = DispatchGroup()
        for index in 0..<concurrency {
            done.enter()
            let thread = Thread { [scheduling] in
                Self.nameCurrentThread("bench-\(index)")
                if !scheduling.applyToCurrentThread(), index == 0 {
                    walletLog("warning: the system refused the \(scheduling.rawValue) scheduling policy; the threads keep the default one")
                }
                run.work(deadline: deadline)
                done.leave()
            }
            thread.name = "bench-\(index)"
            thread.start()
        }
        done.wait()
        let text = report(run, seconds: Date().timeIntervalSince(started), cpuSeconds: Self.processCPUSeconds() - cpuBefore,
                          configuration: chosen)
        return BenchOutcome(report: text, credentials: run.totals.current.credentials)
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
    /// is taken from the issuer, so the report shows it per flow.
    private func report(_ run: BenchRun, seconds: Double, cpuSeconds: Double, configuration: IssuerMetadata.Configuration) -> String {
        let (dpop, batch, concurrency, scheduling) = (options.dpop, options.batch, options.concurrency, options.scheduling)
        let totals = run.totals.current
        let rate = Double(totals.credentials) / max(seconds, 0.001)
        let cpuPerFlow = totals.flows > 0 ? cpuSeconds * 1000 / Double(totals.flows) : 0
        var steps: [String: JSONValue] = [:]
        var lines = [
            "configuration: \(configuration.id) (\(configuration.format)), dpop: \(dpop), batch: \(batch), concurrency: \(concurrency), "
                + "scheduling: \(scheduling.rawValue)",
            String(format: "credentials: %d in %.2f s = %.1f credentials/s (%d flows)", totals.credentials, seconds, rate, totals.flows),
        ]
        for step in BenchRun.Step.allCases {
            let samples = totals.latencies[step.index].sorted()
            let p50 = percentile(samples, 0.50), p99 = percentile(samples, 0.99)
            steps[step.rawValue] = ["count": JSONValue(samples.count), "p50_ms": .double(p50), "p99_ms": .double(p99)]
            let name = step.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
            lines.append("  \(name) " + String(format: "count %7d  p50 %8.2f ms  p99 %8.2f ms", samples.count, p50, p99))
        }
        lines.append(String(format: "client CPU: %.2f s, %.3f ms per flow", cpuSeconds, cpuPerFlow))
        lines.append("verified samples: \(totals.verified)")
        if totals.errors.isEmpty {
            lines.append("errors: none")
        } else {
            lines.append("errors:")
            for (kind, n) in totals.errors.sorted(by: { $0.value > $1.value }) { lines.append("  \(n) × \(kind)") }
        }
        if options.json {
            let document: JSONValue = [
                "credential_configuration_id": .string(configuration.id), "format": .string(configuration.format),
                "dpop": .bool(dpop), "batch": JSONValue(batch), "concurrency": JSONValue(concurrency),
                "scheduling": .string(scheduling.rawValue),
                "credentials": JSONValue(totals.credentials), "flows": JSONValue(totals.flows), "seconds": .double(seconds),
                "credentials_per_second": .double(rate), "steps": .object(steps), "verified_samples": JSONValue(totals.verified),
                "client_cpu_seconds": .double(cpuSeconds), "client_cpu_ms_per_flow": .double(cpuPerFlow),
                "errors": .object(totals.errors.mapValues { JSONValue($0) }),
            ]
            return document.serialized(pretty: true)
        }
        return lines.joined(separator: "\n")
    }

    private func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        // Nearest rank: the smallest sample with at least p of all samples at or below it.
        let rank = Int((Double(sorted.count) * p).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}
