#if canImport(Glibc)
import Glibc
#endif

/// Benchmark-only. How the bench's client threads are scheduled next to the issuer they load on the same cores.
///
/// `batch` (the default) puts each client thread under Linux's SCHED_BATCH: the same fair share of
/// the CPU as any other thread, but a client thread woken by a response does not preempt the
/// thread that is running. Under the default policy every one of a flow's four responses woke a
/// client thread that took the core from the issuer's worker at once, often while that worker held
/// the issuer's database lock, so the other worker blocked on it and a core went idle; the switches
/// and the idle cores' wake-ups (IPIs, which are VM exits on a virtual machine) were paid on both
/// sides, so both spend more CPU per flow under `normal` (measured: see docs/performance.md).
/// A load client on other machines, which is what the bench stands in for, does not preempt the
/// issuer at all. `normal` keeps the default policy, for comparison.
public enum BenchScheduling: String, CaseIterable, Sendable {
    case batch, normal

    public struct UnknownPolicy: Error, CustomStringConvertible {
        public let value: String
        public var description: String { "unknown scheduling policy \(value) (batch or normal)" }
    }

    /// `--scheduling`'s value: exactly `batch` or `normal`.
    public init(parsing value: String) throws(UnknownPolicy) {
        guard let policy = BenchScheduling(rawValue: value) else { throw UnknownPolicy(value: value) }
        self = policy
    }

    /// Applies the policy to the calling thread; false when the system refused (or has no
    /// SCHED_BATCH), in which case the thread keeps the default policy.
    public func applyToCurrentThread() -> Bool {
        switch self {
        case .normal: return true
        case .batch:
            #if os(Linux)
            var parameters = sched_param()
            parameters.sched_priority = 0
            // SCHED_BATCH is 3 in <linux/sched.h>; Glibc exposes it only under _GNU_SOURCE. On
            // Linux, pid 0 is the calling thread, not the whole process.
            return sched_setscheduler(0, 3, &parameters) == 0
            #else
            return false
            #endif
        }
    }
}
