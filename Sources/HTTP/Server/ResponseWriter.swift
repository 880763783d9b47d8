import CMicroHTTPD
import CMicroHTTPDSupport

/// Turns an `HTTPResponse` into an MHD response, completes its headers and queues it.
enum ResponseWriter {
    /// Queues `response`; false when MHD refused it (the connection is then closed).
    static func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> Bool {
        if let prepared = response.wire {
            // MHD takes its own reference; the prepared response keeps ours.
            return MHD_queue_response(connection, prepared.status, prepared.handle) == .YES
        }
        guard let mhd = make(response) else { return false }
        return trustbed_mhd_queue_and_release(connection, status(response), mhd) != 0
    }

    static func status(_ response: HTTPResponse) -> UInt32 {
        UInt32((100...599).contains(response.status.code) ? response.status.code : 500)
    }

    /// A new MHD response (reference count 1) with the body copied and the headers completed.
    static func make(_ response: HTTPResponse) -> OpaquePointer? {
        guard let mhd = response.body.withUnsafeBytes({ trustbed_mhd_response_copy($0.baseAddress, $0.count) }) else {
            return nil
        }
        var hasContentType = false
        for (name, value) in response.headers {
            switch classify(name) {
            case .framing: continue  // MHD writes Content-Length / Transfer-Encoding itself
            case .contentType: hasContentType = true
            case .other: break
            }
            // Explicit withCString: implicit String-to-pointer bridging copies to the heap.
            _ = name.withCString { n in value.withCString { v in MHD_add_response_header(mhd, n, v) } }
        }
        // Clients sniff bodies without a type; 204/304 have no body to describe.
        let status = status(response)
        if !hasContentType && status != 204 && status != 304 {
            _ = MHD_add_response_header(mhd, "Content-Type", "application/octet-stream")
        }
        // CORS and the other policy headers are the route's choice (`ResponsePolicy`).
        return mhd
    }

    private enum HeaderRole { case framing, contentType, other }

    /// Header names this writer cares about, matched case-insensitively without allocating.
    private static func classify(_ name: String) -> HeaderRole {
        switch name.utf8.count {
        case 12 where ASCII.equalsIgnoringCase(name, "Content-Type"): return .contentType
        case 14 where ASCII.equalsIgnoringCase(name, "Content-Length"): return .framing
        case 17 where ASCII.equalsIgnoringCase(name, "Transfer-Encoding"): return .framing
        default: return .other
        }
    }
}
