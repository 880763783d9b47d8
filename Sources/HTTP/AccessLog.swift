import Logging

/// One `.info` line per request: method, path, status, body bytes, duration. The query string
/// is left out because it can carry codes and tokens; headers and bodies are left out because
/// they carry personal data.
struct AccessLog: Sendable {
    let logger: Logger
    /// Read once: `Logger.logLevel` copies the handler existential on every call, which showed
    /// in request profiles. The server's logger is a value fixed at init anyway.
    let isEnabled: Bool

    init(logger: Logger) {
        self.logger = logger
        self.isEnabled = logger.logLevel <= .info
    }

    func record(method: String, path: String, status: Int, bytes: Int, startNanos: UInt64) {
        let elapsed = MonotonicClock.nanoseconds() &- startNanos
        logger.info("\(method) \(Self.printable(path)) \(status) \(bytes) \(Self.milliseconds(elapsed))ms")
    }

    /// "1.234" from nanoseconds, without Foundation's formatter.
    static func milliseconds(_ nanos: UInt64) -> String {
        let micros = nanos / 1000
        let fraction = micros % 1000
        let padding = fraction < 10 ? "00" : fraction < 100 ? "0" : ""
        return "\(micros / 1000).\(padding)\(fraction)"
    }

    /// The path with control characters escaped: it is percent-decoded, and a decoded `%0A`
    /// must not forge a second log line.
    static func printable(_ path: String) -> String {
        // A client picks the path's length; a log line should not grow with it.
        let limit = 256
        let path = path.utf8.count > limit ? String(decoding: path.utf8.prefix(limit), as: UTF8.self) + "…" : path
        guard path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return path }
        var out = ""
        for scalar in path.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
