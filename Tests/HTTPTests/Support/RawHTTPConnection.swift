#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A response as read off the wire.
struct RawResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
    var text: String { String(decoding: body, as: UTF8.self) }
}

enum RawHTTPError: Error { case connect(Int32), closed, timeout, malformed(String) }

/// A blocking TCP connection that speaks just enough HTTP/1.1 to test the server byte by byte:
/// keep-alive, half-sent requests, chunked uploads.
final class RawHTTPConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// `source`: the local IPv4 address to connect from (any of 127.0.0.0/8 is loopback on Linux),
    /// so a test can be two clients.
    init(port: UInt16, host: String = "127.0.0.1", source: String? = nil, timeoutSeconds: Int = 5) throws {
        let isV6 = host.contains(":")
        fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError.connect(errno) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var result: Int32
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            if let source {
                var local = sockaddr_in()
                local.sin_family = sa_family_t(AF_INET)
                inet_pton(AF_INET, source, &local.sin_addr)
                let bound = withUnsafePointer(to: &local) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard bound == 0 else {
                    let error = errno
                    close(fd)
                    throw RawHTTPError.connect(error)
                }
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            throw RawHTTPError.connect(error)
        }
    }

    deinit { close(fd) }

    /// Sends everything; false when the peer has gone (EPIPE/ECONNRESET).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads one response; `head` true when it answers a HEAD request (no body despite length).
    func readResponse(head: Bool = false) throws -> RawResponse {
        let headEnd = try readUntil([13, 10, 13, 10])
        let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw RawHTTPError.malformed(headText) }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].drop(while: { $0 == " " })
            headers.append((name: String(line[..<colon]), value: String(value)))
        }
        var response = RawResponse(status: status, headers: headers, body: [])
        if head || status == 204 || status == 304 { return response }
        if let length = response.header("content-length").flatMap(Int.init) {
            try fill(length)
            response.body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else if response.header("transfer-encoding")?.lowercased() == "chunked" {
            response.body = try readChunked()
        } else {
            while (try? readMore()) == true {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// True when the server closed the connection (reads return EOF or reset) within the timeout.
    func waitForClose() -> Bool {
        while true {
            var byte: UInt8 = 0
            let n = recv(fd, &byte, 1, 0)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    private func readChunked() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try readUntil([13, 10])
            let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            buffer.removeFirst(lineEnd + 2)
            guard let size = Int(sizeText.trimmingCharacters(), radix: 16) else { throw RawHTTPError.malformed(String(sizeText)) }
            try fill(size + 2)
            body += buffer[..<size]
            buffer.removeFirst(size + 2)
            if size == 0 { return body }
        }
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                for i in searchFrom...(buffer.count - marker.count) where buffer[i..<(i + marker.count)].elementsEqual(marker) {
                    return i
                }
                searchFrom = buffer.count - marker.count + 1
            }
            guard try readMore() else { throw RawHTTPError.closed }
        }
    }

    private func fill(_ count: Int) throws {
        while buffer.count < count {
            guard try readMore() else { throw RawHTTPError.closed }
        }
    }

    /// False at EOF.
    private func readMore() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { return false }
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { throw RawHTTPError.timeout }
            if errno == ECONNRESET { return false }
            throw RawHTTPError.closed
        }
        buffer += chunk[..<n]
        return true
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
