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
        var method = method
        return path.withUTF8 { pathBytes in
            method.withUTF8 { methodBytes in
                let cut = cutPoint(pathBytes)
                let capacity = methodBytes.count + 4 * cut + 80
                return String(unsafeUninitializedCapacity: capacity) { buffer in
                    var out = ByteWriter(base: buffer.baseAddress!)
                    out.put(methodBytes)
                    out.put(0x20)
                    for byte in UnsafeBufferPointer(rebasing: pathBytes[..<cut]) {
                        if byte < 0x20 || byte == 0x7F {
                            out.put(0x5C)  // \
                            out.put(0x78)  // x
                            out.put(hexDigit(byte >> 4))
                            out.put(hexDigit(byte & 0x0F))
                        } else {
                            out.put(byte)
                        }
                    }
                    if cut < pathBytes.count { out.put("…") }
                    out.put(0x20)
                    out.put(decimal: UInt64(clamping: status))
                    out.put(0x20)
                    out.put(decimal: UInt64(clamping: bytes))
                    out.put(0x20)
                    let micros = elapsedNanos / 1000
                    out.put(decimal: micros / 1000)
                    out.put(0x2E)
                    out.put(decimal: micros % 1000, minimumDigits: 3)
                    out.put("ms")
                    return out.count
                }
            }
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 48 + value : 87 + value }

    /// Writes bytes at a pointer the caller sized. A struct rather than nested functions: a
    /// closure capturing the write position would box it and check exclusive access per byte.
    private struct ByteWriter {
        let base: UnsafeMutablePointer<UInt8>
        var count = 0

        init(base: UnsafeMutablePointer<UInt8>) { self.base = base }

        mutating func put(_ byte: UInt8) {
            base[count] = byte
            count += 1
        }

        mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
            for byte in bytes { put(byte) }
        }

        mutating func put(_ text: StaticString) {
            put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        mutating func put(decimal value: UInt64, minimumDigits: Int = 1) {
            var width = 1
            var shifted = value / 10
            while shifted > 0 { width += 1; shifted /= 10 }
            width = max(width, minimumDigits)
            var rest = value
            for i in stride(from: count + width - 1, through: count, by: -1) {
                base[i] = UInt8(48 + rest % 10)
                rest /= 10
            }
            count += width
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
