#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPClient
import Wallet

/// Benchmark-only: this target is the load client's machinery, not a general HTTP client. It
/// speaks plain HTTP/1.1 (no TLS, no proxies, no redirects) to the issuer under test, usually on
/// loopback; every other use goes through `HTTPClient`.
///
/// One keep-alive HTTP/1.1 connection to a plain `http://` origin, for the load client
/// (`trustbed wallet bench`), whose every instruction is taken from the issuer it measures on the
/// same cores. On a reused connection libcurl formats each request through its printf, parses
/// headers generically and runs its multi loop, with several system calls per exchange (poll
/// among them). This makes two calls, one send(2) and one recv(2), at a fraction of libcurl's
/// instructions (measured: see docs/performance.md). It speaks what a client needs of RFC 9112:
/// requests with Content-Length, responses framed by Content-Length, chunked coding or the end
/// of the connection, 1xx skipped, `Connection: close` and HTTP/1.0 honoured. https stays with
/// libcurl.
/// Not thread-safe; one per origin and thread, like WalletHTTP.
final class PlainHTTPConnection {
    /// `host` as in the URL (an IPv6 literal keeps its brackets), and the `Host` header value.
    let host: String
    let port: String
    let authority: String
    let timeoutSeconds: Int
    let maximumBytes: Int
    private var descriptor: Int32 = -1
    private let reader: HTTPResponseReader
    private var request: [UInt8] = []

    init(host: String, port: String, authority: String, timeoutSeconds: Int, maximumBytes: Int, interesting: [String]) {
        self.host = host
        self.port = port
        self.authority = authority
        self.timeoutSeconds = timeoutSeconds
        self.maximumBytes = maximumBytes
        reader = HTTPResponseReader(authority: authority, timeoutSeconds: timeoutSeconds, maximumBytes: maximumBytes,
                                    interesting: interesting)
        request.reserveCapacity(4 * 1024)
    }

    deinit { disconnect() }

    /// Sends one request and reads its response. A request on a reused connection that the server
    /// closed while it was idle (nothing of a response arrived) is sent again once on a new
    /// connection, as libcurl and browsers do.
    func exchange(method: String, target: String, headers: [String], body: [UInt8]?) throws -> HTTPResponseReader.Response {
        try buildRequest(method: method, target: target, headers: headers, body: body)
        var mayRetry = true
        while true {
            let reused = descriptor >= 0
            do {
                if !reused { try establish() }
                return try sendAndReceive(method: method)
            } catch HTTPResponseReader.ConnectionClosed.beforeResponse {
                disconnect()
                if reused && mayRetry {
                    mayRetry = false
                    continue
                }
                throw WalletError.transport("\(method) http://\(authority)\(target): the server closed the connection")
            } catch {
                disconnect()
                throw error
            }
        }
    }

    /// Built in a local array and stored once (every append to the stored property pays an
    /// exclusivity check), with byte-wise header checks rather than String.hasSuffix and a
    /// UTF-8 view scan per header.
    private func buildRequest(method: String, target: String, headers: [String], body: [UInt8]?) throws {
        var out = request
        request = []
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: method.utf8)
        out.append(32)
        out.append(contentsOf: target.utf8)
        out.append(contentsOf: Self.version)
        out.append(contentsOf: authority.utf8)
        out.append(contentsOf: Self.userAgent)
        for header in headers {
            // A header with nothing after its colon ("Expect:") is how libcurl is told to leave
            // out one of its own; here there is none to leave out.
            if header.utf8.last == UInt8(ascii: ":") { continue }
            let start = out.count
            out.append(contentsOf: header.utf8)
            // Values can come from a server (an access token): never let one add a header line.
            guard !out[start...].contains(where: { $0 == 13 || $0 == 10 }) else {
                request = out
                throw WalletError.malformed("a request header would contain a line break: \(header.prefix(60))")
            }
            out.append(contentsOf: Self.crlf)
        }
        if body != nil || method == "POST" || method == "PUT" {
            out.append(contentsOf: Self.contentLengthHeader)
            out.append(contentsOf: String(body?.count ?? 0).utf8)
            out.append(contentsOf: Self.crlf)
        }
        out.append(contentsOf: Self.crlf)
        if let body { out.append(contentsOf: body) }
        request = out
    }

    private static let version = Array(" HTTP/1.1\r\nHost: ".utf8)
    private static let userAgent = Array("\r\nUser-Agent: trustbed-wallet\r\n".utf8)
    private static let contentLengthHeader = Array("Content-Length: ".utf8)
    private static let crlf: [UInt8] = [13, 10]

    private func sendAndReceive(method: String) throws -> HTTPResponseReader.Response {
        try sendAll()
        var (response, keepAlive) = try reader.read(from: descriptor, method: method)
        // 1xx interim responses (RFC 9110 §15.2) precede the final one.
        while (100..<200).contains(response.status) { (response, keepAlive) = try reader.read(from: descriptor, method: method) }
        if !keepAlive { disconnect() }
        return response
    }

    private func sendAll() throws {
        var sent = 0
        while sent < request.count {
            let n = request.withUnsafeBytes { send(descriptor, $0.baseAddress! + sent, $0.count - sent, sendFlags) }
            if n < 0 {
                if errno == EINTR { continue }
                // A peer that closed the idle connection shows up as EPIPE or ECONNRESET here.
                if errno == EPIPE || errno == ECONNRESET { throw HTTPResponseReader.ConnectionClosed.beforeResponse }
                throw WalletError.transport("send to \(authority): \(String(cString: strerror(errno)))")
            }
            sent += n
        }
    }

    // MARK: - the socket

    private func establish() throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamSocket
        var found: UnsafeMutablePointer<addrinfo>?
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let status = getaddrinfo(name, port, &hints, &found)
        guard status == 0, let first = found else {
            throw WalletError.transport("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, streamSocket | closeOnExec, address.pointee.ai_protocol)
            if fd < 0 { lastError = errno; continue }
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            var on: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            if connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                descriptor = fd
                reader.reset()
                return
            }
            lastError = errno
            close(fd)
        }
        throw WalletError.transport("cannot connect to \(authority): \(String(cString: strerror(lastError)))")
    }

    private func disconnect() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        reader.reset()
    }
}

#if canImport(Glibc)
private let streamSocket = Int32(SOCK_STREAM.rawValue)
private let closeOnExec = Int32(SOCK_CLOEXEC.rawValue)
/// A peer that closed the connection must give EPIPE, not kill the process with SIGPIPE.
private let sendFlags = Int32(MSG_NOSIGNAL)
#else
private let streamSocket = SOCK_STREAM
private let closeOnExec: Int32 = 0
private let sendFlags: Int32 = 0
#endif
