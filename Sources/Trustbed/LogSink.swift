import Foundation
import Logging

/// Where log lines go: a file descriptor (standard error for `serve`), written in batches.
///
/// The access log writes a line per request from every worker thread. A `write(2)` per line
/// cost more than serving a cached statement, and one buffer shared under a lock made the
/// workers wait for each other (and for a preempted holder). So each thread appends to its own
/// buffer, under a lock only the flusher ever contends for, and everything is written every
/// `interval`, when a buffer grows large, and at once for warnings and errors so that problems
/// are never held back. Lines of one thread stay in order; within one batch, lines of different
/// threads are grouped by thread. A `kill -9` loses at most one interval of info lines.
public final class LogSink: @unchecked Sendable {
    private let descriptor: Int32
    private var key = pthread_key_t()
    /// Guards `buffers` and serializes writers, so batches reach the descriptor whole and in order.
    private let registry = NSLock()
    private var buffers: [ThreadBuffer] = []
    private var timer: DispatchSourceTimer?
    static let flushThreshold = 64 * 1024

    public init(descriptor: Int32 = 2, interval: DispatchTimeInterval = .milliseconds(100)) {
        self.descriptor = descriptor
        // A thread that ends hands its buffer back, so short-lived threads do not pile up.
        pthread_key_create(&key) { raw in
            guard let raw else { return }
            let buffer = Unmanaged<ThreadBuffer>.fromOpaque(raw).takeRetainedValue()
            buffer.sink?.retire(buffer)
        }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "trustbed.log"))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.flush() }
        timer.resume()
        self.timer = timer
    }

    deinit {
        timer?.cancel()
        flush()
        pthread_key_delete(key)
    }

    /// Appends one line: timestamp, level, label, message, metadata.
    func append(level: Logger.Level, label: String, message: String, metadata: String?) {
        let buffer = currentBuffer()
        let size = buffer.append(level: level, label: label, message: message, metadata: metadata)
        if level >= .warning || size >= Self.flushThreshold { flush() }
    }

    /// Writes out everything appended so far, by every thread.
    public func flush() {
        registry.withLock {
            for buffer in buffers { write(buffer.take()) }
        }
    }

    private func currentBuffer() -> ThreadBuffer {
        if let raw = pthread_getspecific(key) { return Unmanaged<ThreadBuffer>.fromOpaque(raw).takeUnretainedValue() }
        let buffer = ThreadBuffer(sink: self)
        registry.withLock { buffers.append(buffer) }
        pthread_setspecific(key, Unmanaged.passRetained(buffer).toOpaque())
        return buffer
    }

    private func retire(_ buffer: ThreadBuffer) {
        registry.withLock {
            write(buffer.take())
            buffers.removeAll { $0 === buffer }
        }
    }

    /// Called with `registry` held.
    private func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }  // nowhere to log to; dropping beats blocking the server
                offset += n
            }
        }
    }
}

/// One thread's pending lines, and the line prefix ("timestamp level label: ") it last wrote,
/// kept until the second, the level or the label changes: most lines are access-log lines of
/// the same second.
private final class ThreadBuffer: @unchecked Sendable {
    weak var sink: LogSink?
    private let lock = NSLock()
    /// One stored property, so a line costs one exclusive access rather than one per field.
    private var lines = Lines()

    init(sink: LogSink) { self.sink = sink }

    /// Appends a line; returns the bytes now pending.
    func append(level: Logger.Level, label: String, message: String, metadata: String?) -> Int {
        lock.withLock { lines.append(level: level, label: label, message: message, metadata: metadata) }
    }

    /// The pending bytes, leaving the buffer empty.
    func take() -> [UInt8] {
        lock.withLock {
            var taken: [UInt8] = []
            swap(&taken, &lines.pending)
            lines.pending.reserveCapacity(min(taken.count, LogSink.flushThreshold))
            return taken
        }
    }

    private struct Lines {
        var pending: [UInt8] = []
        var prefix: [UInt8] = []
        var prefixSecond = -1
        var prefixLevel = Logger.Level.trace
        var prefixLabel = ""

        mutating func append(level: Logger.Level, label: String, message: String, metadata: String?) -> Int {
            refreshPrefix(level: level, label: label)
            pending.append(contentsOf: prefix)
            var message = message
            message.withUTF8 { pending.append(contentsOf: $0) }
            if var metadata {
                pending.append(0x20)
                metadata.withUTF8 { pending.append(contentsOf: $0) }
            }
            pending.append(0x0A)
            return pending.count
        }

        private mutating func refreshPrefix(level: Logger.Level, label: String) {
            let now = time(nil)
            guard now != prefixSecond || level != prefixLevel || label != prefixLabel else { return }
            var t = now
            var parts = tm()
            gmtime_r(&t, &parts)
            var text = [CChar](repeating: 0, count: 32)
            let n = strftime(&text, text.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
            prefix = text[..<n].map { UInt8(bitPattern: $0) } + Array(" \(level.rawValue) \(label): ".utf8)
            prefixSecond = now
            prefixLevel = level
            prefixLabel = label
        }
    }
}
