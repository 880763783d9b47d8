#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPClient
import Wallet

/// Benchmark-only (see PlainHTTPConnection). Reads HTTP/1.x responses from a connected socket for PlainHTTPConnection (RFC 9112): the
/// status line, the headers the wallet reads, and the body framed by Content-Length, chunked
/// transfer coding or the end of the connection. Its buffer lives as long as the connection
/// object, so a response costs no allocation but its body's.
public final class HTTPResponseReader {
    public struct Response {
        public let status: Int
        /// The headers the wallet reads (lowercased names, first occurrence).
        public let headers: HeaderFields
        public let body: [UInt8]
    }

    /// The connection ended before any byte of a response: a reused connection the server
    /// closed while idle, which the caller may open again once.
    public enum ConnectionClosed: Error { case beforeResponse }

    let authority: String
    let timeoutSeconds: Int
    let maximumBytes: Int
    /// The response headers kept in `Response.headers`, lowercased, with their bytes.
    private let interesting: [(name: String, bytes: [UInt8])]
    private var descriptor: Int32 = -1
    /// Received bytes not consumed yet: `inbox[readIndex..<filled]`; the rest is free space. Raw
    /// memory rather than an array: the parser indexes it per byte, and an array in a class
    /// pays exclusivity and uniqueness checks on each access (about a third of the reader's cost).
    private var inbox: UnsafeMutableBufferPointer<UInt8>
    private var readIndex = 0
    private var filled = 0

    public init(authority: String, timeoutSeconds: Int, maximumBytes: Int, interesting: [String]) {
        self.authority = authority
        self.timeoutSeconds = timeoutSeconds
        self.maximumBytes = maximumBytes
        self.interesting = interesting.map { ($0.lowercased(), Array($0.lowercased().utf8)) }
        inbox = .allocate(capacity: 64 * 1024)
    }

    deinit { inbox.deallocate() }

    /// Forgets what was buffered (a new connection).
    public func reset() {
        readIndex = 0
        filled = 0
    }

    /// The next response on `descriptor`, and whether the connection stays open after it.
    public func read(from descriptor: Int32, method: String) throws -> (response: Response, keepAlive: Bool) {
        self.descriptor = descriptor
        return try readResponse(method: method)
    }

    /// Reads more bytes after `filled`; false at the end of the stream. Consumed bytes are
    /// dropped by moving the rest down; the storage grows only for a response that does not fit.
    private func fill() throws -> Bool {
        if readIndex > 0 {
            let unread = filled - readIndex
            if unread > 0 { UnsafeMutableRawPointer(inbox.baseAddress!).copyMemory(from: inbox.baseAddress! + readIndex, byteCount: unread) }
            filled = unread
            readIndex = 0
        }
        if filled == inbox.count {
            guard inbox.count < maximumBytes + 64 * 1024 else {
                throw WalletError.transport("\(authority): response larger than \(maximumBytes) bytes")
            }
            let larger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: inbox.count * 2)
            larger.baseAddress!.update(from: inbox.baseAddress!, count: filled)
            inbox.deallocate()
            inbox = larger
        }
        var received = 0
        repeat { received = recv(descriptor, inbox.baseAddress! + filled, inbox.count - filled, 0) } while received < 0 && errno == EINTR
        if received < 0 {
            let failure = errno
            if failure == ECONNRESET, readIndex == filled { return false }
            if failure == EAGAIN || failure == EWOULDBLOCK { throw WalletError.transport("\(authority): no answer within \(timeoutSeconds) s") }
            throw WalletError.transport("recv from \(authority): \(String(cString: strerror(failure)))")
        }
        filled += received
        return received > 0
    }

    /// The position of the next line in the inbox (without its CRLF), reading as needed.
    private func readLine(startOfResponse: Bool = false) throws -> Range<Int> {
        var scanned = 0  // bytes after readIndex known to hold no LF
        while true {
            let from = readIndex + scanned
            if let found = memchr(inbox.baseAddress! + from, 10, filled - from) {
                let lf = inbox.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                let line = readIndex..<(lf > readIndex && inbox[lf - 1] == 13 ? lf - 1 : lf)
                readIndex = lf + 1
                return line
            }
            scanned = filled - readIndex
            if scanned > 64 * 1024 { throw WalletError.transport("\(authority): a header line longer than 64 KiB") }
            guard try fill() else {
                if startOfResponse && readIndex == filled { throw ConnectionClosed.beforeResponse }
                throw WalletError.transport("\(authority): the connection closed in the middle of a response")
            }
        }
    }

    private func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: inbox[range]), as: UTF8.self) }

    /// Whether the bytes in `range` are `lowercase` in any letter case (header names, tokens).
    private func equalsIgnoringCase(_ range: Range<Int>, _ lowercase: [UInt8]) -> Bool {
        guard range.count == lowercase.count else { return false }
        var i = range.lowerBound
        for expected in lowercase {
            let b = inbox[i]
            if b != expected && !(b >= 65 && b <= 90 && b + 32 == expected) { return false }
            i += 1
        }
        return true
    }

    /// A comma-separated header value as lowercased tokens (tokens hold no whitespace).
    private func tokens(_ range: Range<Int>) -> [String] {
        text(range).lowercased().split(separator: ",").map { String($0.filter { $0 != " " && $0 != "\t" }) }
    }

    /// `range` without optional whitespace (RFC 9110 §5.5) at either end.
    private func trimmed(_ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, inbox[lower] == 32 || inbox[lower] == 9 { lower += 1 }
        while upper > lower, inbox[upper - 1] == 32 || inbox[upper - 1] == 9 { upper -= 1 }
        return lower..<upper
    }

    private func readBytes(_ count: Int, into body: inout [UInt8]) throws {
        guard body.count + count <= maximumBytes else { throw WalletError.transport("\(authority): response larger than \(maximumBytes) bytes") }
        while filled - readIndex < count {
            guard try fill() else { throw WalletError.transport("\(authority): the connection closed in the middle of a body") }
        }
        body.append(contentsOf: UnsafeBufferPointer(rebasing: inbox[readIndex..<(readIndex + count)]))
        readIndex += count
    }

    private func readResponse(method: String) throws -> (response: Response, keepAlive: Bool) {
        // "HTTP/1.1 200 OK": the version, a space, three digits, then a space or the end.
        let statusLine = try readLine(startOfResponse: true)
        let s = statusLine.lowerBound
        guard statusLine.count >= 12, equalsIgnoringCase(s..<(s + 7), Self.http1), inbox[s + 7] >= 48, inbox[s + 7] <= 57,
              inbox[s + 8] == 32, (s + 9..<s + 12).allSatisfy({ inbox[$0] >= 48 && inbox[$0] <= 57 }),
              statusLine.count == 12 || inbox[s + 12] == 32 else {
            throw WalletError.transport("\(authority): not an HTTP/1.x status line: \(text(statusLine).prefix(80))")
        }
        let status = (s + 9..<s + 12).reduce(0) { $0 * 10 + Int(inbox[$1] - 48) }
        var keepAlive = inbox[s + 7] == 49  // HTTP/1.1 keeps the connection unless told otherwise; 1.0 closes it
        var contentLength: Int?
        var chunked = false
        var headers = HeaderFields()
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.first(where: { inbox[$0] == 58 }) else { throw WalletError.transport("\(authority): a malformed header line") }
            let name = line.lowerBound..<colon, value = trimmed((colon + 1)..<line.upperBound)
            if equalsIgnoringCase(name, Self.contentLength) {
                guard let n = Int(text(value)), n >= 0, contentLength == nil || contentLength == n else {
                    throw WalletError.transport("\(authority): a bad Content-Length")
                }
                contentLength = n
            } else if equalsIgnoringCase(name, Self.transferEncoding) {
                chunked = tokens(value).last == "chunked"
            } else if equalsIgnoringCase(name, Self.connection) {
                let tokens = tokens(value)
                if tokens.contains("close") { keepAlive = false } else if tokens.contains("keep-alive") { keepAlive = true }
            } else if let known = interesting.first(where: { equalsIgnoringCase(name, $0.bytes) }), headers[known.name] == nil {
                headers.add(known.name, text(value))
            }
        }
        var body: [UInt8] = []
        // RFC 9112 §6.3: no body after HEAD, 1xx, 204 and 304; chunked wins over Content-Length.
        if method == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 {
        } else if chunked {
            try readChunked(into: &body)
        } else if let contentLength {
            body.reserveCapacity(contentLength)
            try readBytes(contentLength, into: &body)
        } else {
            keepAlive = false
            while try fill() {}
            try readBytes(filled - readIndex, into: &body)
        }
        return (Response(status: status, headers: headers, body: body), keepAlive)
    }

    private static let http1 = Array("http/1.".utf8)
    private static let contentLength = Array("content-length".utf8)
    private static let transferEncoding = Array("transfer-encoding".utf8)
    private static let connection = Array("connection".utf8)

    /// RFC 9112 §7.1: size lines in hex (extensions ignored), data, CRLF; trailers skipped.
    private func readChunked(into body: inout [UInt8]) throws {
        while true {
            let line = text(try readLine())
            let digits = line.prefix { $0 != ";" && $0 != " " && $0 != "\t" }
            guard !digits.isEmpty, digits.count <= 15, let size = Int(digits, radix: 16) else {
                throw WalletError.transport("\(authority): a bad chunk size")
            }
            if size == 0 {
                while try !readLine().isEmpty {}
                return
            }
            try readBytes(size, into: &body)
            guard try readLine().isEmpty else { throw WalletError.transport("\(authority): a chunk without its CRLF") }
        }
    }
}
