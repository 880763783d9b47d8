import Foundation
import Logging

/// Log lines to standard error with one `write(2)` each. swift-log's stream handler formats a
/// full local timestamp and flushes stdio per line, which cost more than serving a cached
/// statement; this one reuses the timestamp within a second and skips stdio.
public struct StandardErrorLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let timestamps = TimestampCache()

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = timestamps.current()
        line += " \(event.level) \(label): \(event.message)"
        let merged = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        line += "\n"
        line.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

/// An ISO 8601 UTC timestamp, formatted once per second.
private final class TimestampCache: @unchecked Sendable {
    private let lock = NSLock()
    private var second = -1
    private var text = ""

    func current() -> String {
        let now = time(nil)
        return lock.withLock {
            if now != second {
                var tm = tm()
                var t = now
                gmtime_r(&t, &tm)
                var buffer = [UInt8](repeating: 0, count: 32)
                let n = buffer.withUnsafeMutableBufferPointer { b in
                    b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { strftime($0, b.count, "%Y-%m-%dT%H:%M:%SZ", &tm) }
                }
                text = String(decoding: buffer[..<n], as: UTF8.self)
                second = now
            }
            return text
        }
    }
}
