import Foundation
import JSON
import Support
import Wallet

/// One client thread's side of a flow: made (and set up: sessions, registered instances, a
/// wallet attestation) before the clock starts, then run once per iteration.
protocol FlowWorker: AnyObject {
    /// One whole flow. `step` names the step under way, for the error tally; each finished step
    /// is recorded in `totals`.
    func run(iteration: Int, step: inout BenchRun.Step, totals: inout BenchRun.Totals) throws
}

/// The shared state of one bench run: the iteration counter and the merged results. Workers
/// keep their samples locally and merge once at the end, so the lock is not on the hot path.
public final class BenchRun: @unchecked Sendable {
    struct Totals {
        var flows = 0
        var credentials = 0
        var verified = 0
        /// Milliseconds per step, by `Step.index`.
        var latencies = [[Double]](repeating: [], count: Step.allCases.count)
        var errors: [String: Int] = [:]
    }

    let flow: BenchFlow
    let limit: Int
    /// Makes thread `index`'s worker (on that thread, before the clock starts).
    let makeWorker: (Int) throws -> FlowWorker
    private let next = Locked(0)
    let totals = Locked(Totals())

    init(flow: BenchFlow, limit: Int, makeWorker: @escaping (Int) throws -> FlowWorker) {
        self.flow = flow
        self.limit = limit
        self.makeWorker = makeWorker
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

    /// Sets up thread `index`'s worker, reports it ready, waits for the start, then runs flows
    /// until the count or the deadline (read once the start is given) is reached.
    func work(index: Int, ready: () -> Void, start: () -> Date?) {
        var local = Totals()
        defer { totals.withLock { merge(local, into: &$0) } }
        let worker: FlowWorker?
        do { worker = try makeWorker(index) } catch {
            local.errors["setup: \(error)", default: 0] += 1
            worker = nil
        }
        ready()
        let deadline = start()
        guard let worker else { return }
        while let iteration = claim(deadline: deadline) {
            var step = flow.steps[0]
            do {
                try worker.run(iteration: iteration, step: &step, totals: &local)
                local.flows += 1
            } catch is Exhausted {
                break
            } catch let error as WalletError {
                local.errors[Self.kind(of: error, step: step), default: 0] += 1
                // An unreachable server (refused, reset: the kill -9 in the benchmark) fails at
                // once; without a pause every thread would spin on connect(2), taking the cores
                // from the server's restart.
                if case .transport = error { Thread.sleep(forTimeInterval: Self.transportPause) }
            } catch {
                local.errors["\(step.rawValue): \(error)", default: 0] += 1
            }
        }
    }

    static let transportPause = 0.02

    /// Thrown by a worker whose work prepared before the clock started (`--prepare`) is all done:
    /// its thread stops, without an error.
    struct Exhausted: Error {}

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
        for (index, samples) in local.latencies.enumerated() { totals.latencies[index] += samples }
        for (kind, n) in local.errors { totals.errors[kind, default: 0] += n }
    }
}

extension BenchRun.Totals {
    /// Milliseconds since `start`, which then moves to now (the next step's start).
    mutating func record(_ step: BenchRun.Step, since start: inout DispatchTime) {
        let now = DispatchTime.now()
        latencies[step.index].append(Double(now.uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000)
        start = now
    }
}

/// What the server acknowledged during a bench run, one line each, written with one unbuffered
/// write(2) per acknowledgement, so the file is complete whatever happens to the server: the
/// status list entries of the SD-JWT VCs received, or the `hardware_key_tag` of every instance
/// registered (204). The kill -9 checks compare it with the database after a restart.
final class AcknowledgementLog: Sendable {
    private let descriptor: Locked<Int32>

    init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw WalletError.usage("cannot open \(path)") }
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
        append(text)
    }

    /// A registered instance's tag (one printable-ASCII token, no spaces: the bench makes them).
    func record(tag: String) { append(tag + "\n") }

    private func append(_ text: String) {
        guard !text.isEmpty else { return }
        descriptor.withLock { fd in _ = text.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) } }
    }
}
