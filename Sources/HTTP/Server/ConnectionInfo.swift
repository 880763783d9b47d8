import CMicroHTTPD

/// Reads what a request handler needs from an MHD connection.
enum ConnectionInfo {
    /// Request headers by lower-cased name; repeats joined with ", ".
    static func headers(_ connection: OpaquePointer) -> [String: String] {
        // Sized once: growing a dictionary rehashes it, and most requests carry few headers.
        var headers = [String: String](minimumCapacity: Int(trustbed_mhd_request_header_count(connection)))
        _ = withUnsafeMutablePointer(to: &headers) { pointer in
            trustbed_mhd_request_headers(connection, collectHeader, pointer)
        }
        return headers
    }

    /// The client's IP address as text, "" when unknown.
    static func remoteAddress(_ connection: OpaquePointer) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let length = trustbed_mhd_client_address(connection, buffer.baseAddress, buffer.count)
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: length), as: UTF8.self)
        }
    }
}

/// MHD_KeyValueIteratorN adding one header to the `[String: String]` behind `cls`.
private func collectHeader(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ keySize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let headers = cls.assumingMemoryBound(to: [String: String].self)
    let name = ASCII.lowercased(UnsafeBufferPointer(start: UnsafeRawPointer(key).assumingMemoryBound(to: UInt8.self), count: keySize))
    let text = value.map {
        String(decoding: UnsafeBufferPointer(start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: valueSize), as: UTF8.self)
    } ?? ""
    if let earlier = headers.pointee.updateValue(text, forKey: name) {
        headers.pointee[name] = earlier + ", " + text
    }
    return .YES
}
