import CMicroHTTPD
import CMicroHTTPDSupport

/// Reads what a request handler needs from an MHD connection.
enum ConnectionInfo {
    /// Request header fields with lower-cased names; repeats joined with ", ".
    static func fields(_ connection: OpaquePointer) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(Int(trustbed_mhd_request_header_count(connection)))
        _ = withUnsafeMutablePointer(to: &fields) { pointer in
            trustbed_mhd_request_headers(connection, collectHeader, pointer)
        }
        return fields
    }

    /// The headers that choose the mount, each its first value.
    static func routingHeaders(_ connection: OpaquePointer) -> RoutingHeaders {
        RoutingHeaders(host: header(connection, "Host"), forwardedHost: header(connection, "X-Forwarded-Host"),
                       forwardedProto: header(connection, "X-Forwarded-Proto"))
    }

    private static func header(_ connection: OpaquePointer, _ name: StaticString) -> String? {
        name.withUTF8Buffer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { trustbed_mhd_request_header(connection, $0.baseAddress!) }
        }.map { String(cString: $0) }
    }

    /// The client's IP address, copied now and formatted only if read.
    static func clientAddress(_ connection: OpaquePointer) -> ClientAddress {
        ClientAddress(raw: trustbed_mhd_client_address(connection))
    }
}

/// A client's IP address as MHD reported it. Formatting it on every request would be work
/// only tests use, so `HTTPRequest` keeps this and formats on `remoteAddress`.
struct ClientAddress: @unchecked Sendable {  // a plain C struct: an int and 16 bytes
    let raw: trustbed_client_address

    /// Dotted IPv4 or RFC 5952 IPv6 text, "" when unknown.
    var text: String {
        var raw = raw
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let length = trustbed_format_client_address(&raw, buffer.baseAddress, buffer.count)
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: length), as: UTF8.self)
        }
    }
}

/// MHD_KeyValueIteratorN adding one header to the field list behind `cls`.
private func collectHeader(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ keySize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let fields = cls.assumingMemoryBound(to: [(name: String, value: String)].self)
    let name = ASCII.lowercased(UnsafeBufferPointer(start: UnsafeRawPointer(key).assumingMemoryBound(to: UInt8.self), count: keySize))
    let text = value.map {
        String(decoding: UnsafeBufferPointer(start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: valueSize), as: UTF8.self)
    } ?? ""
    HTTPRequest.add(name: name, value: text, to: &fields.pointee)
    return .YES
}
