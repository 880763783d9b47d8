import Foundation

/// A fixed set of threads for work that blocks on other hosts (remote fetches during a resolve),
/// so that such work never occupies an HTTP worker thread. Bounded twice: `threads` jobs run at
/// once and at most `queueLimit` wait; past that `submit` refuses at once, and the caller answers
/// "temporarily unavailable" instead of queueing without end.
public final class WorkPool: Sendable {
    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var stopped = false
        var count: Int { jobs.count - head }
    }

    private let queue = Locked(Queue())
    /// Counts queued jobs (and, on shutdown, one wake-up per thread).
    private let available = DispatchSemaphore(value: 0)
    private let queueLimit: Int
    private let threadCount: Int

    public init(name: String, threads: Int, queueLimit: Int) {
        self.queueLimit = queueLimit
        threadCount = max(1, threads)
        for i in 0..<threadCount {
            let t = Thread { [self] in run() }
            t.name = "\(name)-\(i)"
            t.start()
        }
    }

    /// Queues `work`; false (and `work` is dropped) when the queue is full or the pool stopped.
    @discardableResult
    public func submit(_ work: @escaping @Sendable () -> Void) -> Bool {
        let accepted = queue.withLock { q -> Bool in
            guard !q.stopped, q.count < queueLimit else { return false }
            q.jobs.append(work)
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// Jobs waiting, not counting those running.
    public var waiting: Int { queue.read { $0.count } }

    /// Lets running jobs finish, drops queued ones and ends the threads.
    public func shutdown() {
        queue.withLock { q in
            q.stopped = true
            q.jobs = []
            q.head = 0
        }
        for _ in 0..<threadCount { available.signal() }
    }

    private func run() {
        while true {
            available.wait()
            let next = queue.withLock { q -> (@Sendable () -> Void)?? in
                if q.stopped { return .none }
                guard q.head < q.jobs.count else { return .some(nil) }
                let job = q.jobs[q.head]
                q.head += 1
                // Compact now and then so the array does not grow with every job ever queued.
                if q.head > 64 && q.head * 2 > q.jobs.count {
                    q.jobs.removeFirst(q.head)
                    q.head = 0
                }
                return .some(job)
            }
            switch next {
            case .none: return
            case .some(let job?): job()
            case .some(nil): continue
            }
        }
    }
}
