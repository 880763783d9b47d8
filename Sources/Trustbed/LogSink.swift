import Foundation
import Logging
import Support

/// Where log lines go: a file descriptor (standard error for `serve`), written in batches.
///
/// The access log writes a line per request from every worker thread, and a `write(2)` per line
/// cost more than serving a cached statement. So lines are appended to one buffer and written
/// every `interval`, when the buffer grows large, and at once for warnings and errors so that
/// problems are never held back. A `kill -9` loses at most one interval of info lines.
///
/// One buffer under one lock: a buffer per worker thread (pthread keys) was measured against it
/// and did not pay for its complexity (see docs/performance.md).
/// `@unchecked`: the timer is set up in `init` and only cancelled in `deinit`.
public final class LogSink: @unchecked Sendable {
    private let descriptor: Int32
    private let buffer = Locked(Lines())
    /// Serializes writers, so batches reach the descriptor whole and in order.
    private let writer = Locked(())
    private let timer: DispatchSourceTimer
    static let flushThreshold = 64 * 1024

    public init(descriptor: Int32 = 2, interval: DispatchTimeInterval = .milliseconds(100)) {
        self.descriptor = descriptor
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "trustbed.log"))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.flush() }
        timer.resume()
    }

    deinit {
        timer.cancel()
        flush()
    }

    /// Appends one line: timestamp, level, label, message, metadata.
    func append(level: Logger.Level, label: String, message: String, metadata: String?) {
        let size = buffer.withLock { $0.append(level: level, label: label, message: message, metadata: metadata) }
        if level >= .warning || size >= Self.flushThreshold { flush() }
    }

    /// Writes out everything appended so far.
    public func flush() {
        writer.withLock { _ in
            let bytes = buffer.withLock { lines -> [UInt8] in
                var taken: [UInt8] = []
                swap(&taken, &lines.pending)
                lines.pending.reserveCapacity(min(taken.count, Self.flushThreshold))
                return taken
            }
            write(bytes)
        }
    }

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

/// Pending lines, and the line prefix ("timestamp level label: ") last written, kept until the
/// second, the level or the label changes: most lines are access-log lines of the same second.
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
