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
        let line = Self.line(
            method: method, path: path, status: status, bytes: bytes,
            elapsedNanos: MonotonicClock.nanoseconds() &- startNanos)
        // A literal message and an explicit source: interpolation would copy the line again, and
        // without a source swift-log works the module name out of #fileID on every call.
        logger.info(Logger.Message(stringLiteral: line), source: "HTTP")
    }

    /// Longest path logged; a client picks the path's length, a log line should not grow with it.
    static let pathLimit = 256

    /// "GET /path 200 1234 0.052ms", formatted byte by byte into one allocation: string
    /// interpolation cost several times more than the rest of serving a cached statement. The
    /// path is percent-decoded, so control characters are escaped (a decoded %0A must not forge
    /// a second line) and it is cut at `pathLimit` bytes on a character boundary.
    static func line(method: String, path: String, status: Int, bytes: Int, elapsedNanos: UInt64) -> String {
        var path = path
        return path.withUTF8 { pathBytes in
            let cut = cutPoint(pathBytes)
            let capacity = method.utf8.count + 4 * cut + 80
            return String(unsafeUninitializedCapacity: capacity) { buffer in
                // Raw pointer writes: `capacity` bounds every write below.
                let out = buffer.baseAddress!
                var n = 0
                func put(_ byte: UInt8) { out[n] = byte; n += 1 }
                func put(_ text: StaticString) {
                    for i in 0..<text.utf8CodeUnitCount { put(text.utf8Start[i]) }
                }
                func put(decimal value: UInt64, minimumDigits: Int = 1) {
                    var width = 1
                    var shifted = value / 10
                    while shifted > 0 { width += 1; shifted /= 10 }
                    width = max(width, minimumDigits)
                    var rest = value
                    for i in stride(from: n + width - 1, through: n, by: -1) {
                        out[i] = UInt8(48 + rest % 10)
                        rest /= 10
                    }
                    n += width
                }
                let hex: StaticString = "0123456789abcdef"

                var method = method
                method.withUTF8 { for byte in $0 { put(byte) } }
                put(0x20)
                for byte in UnsafeBufferPointer(rebasing: pathBytes[..<cut]) {
                    if byte < 0x20 || byte == 0x7F {
                        put(0x5C); put(0x78)  // \x
                        put(hex.utf8Start[Int(byte >> 4)]); put(hex.utf8Start[Int(byte & 0x0F)])
                    } else {
                        put(byte)
                    }
                }
                if cut < pathBytes.count { put("…") }
                put(0x20)
                put(decimal: UInt64(clamping: status))
                put(0x20)
                put(decimal: UInt64(clamping: bytes))
                put(0x20)
                let micros = elapsedNanos / 1000
                put(decimal: micros / 1000)
                put(0x2E)
                put(decimal: micros % 1000, minimumDigits: 3)
                put("ms")
                return n
            }
        }
    }

    /// How much of the path is logged: at most `pathLimit` bytes, not splitting a UTF-8 sequence.
    private static func cutPoint(_ path: UnsafeBufferPointer<UInt8>) -> Int {
        guard path.count > pathLimit else { return path.count }
        var end = pathLimit
        while end > 0 && path[end] & 0xC0 == 0x80 { end -= 1 }
        return end
    }
}
