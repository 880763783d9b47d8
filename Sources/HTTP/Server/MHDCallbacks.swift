import CMicroHTTPD
import CMicroHTTPDSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The C callbacks MHD calls. They cannot capture context, so `cls` carries the server
// (unretained: the server stops the daemon before it goes away) and `*con_cls` carries the
// per-request context. `_withUnsafeGuaranteedRef` avoids a retain/release pair per call, which
// on a shared object would bounce one cache line between all worker cores.

func mhdAccessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ upload: UnsafePointer<CChar>?,
    _ uploadSize: UnsafeMutablePointer<Int>?, _ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let url, let method, let uploadSize, let state else { return .NO }
    let handled = Unmanaged<HTTPServer>.fromOpaque(cls)._withUnsafeGuaranteedRef {
        $0.access(connection: connection, url: url, method: method, version: version, upload: upload, uploadSize: uploadSize,
                  state: state)
    }
    return handled ? .YES : .NO
}

/// Runs before MHD splits the URI, so it is the one place the raw query is visible. Only a URI
/// with a query gets a context; the common bodiless, query-less GET allocates nothing here.
/// The query is copied out and then taken away from MHD (`trustbed_mhd_detach_query`): MHD
/// would keep a record per parameter in the connection's 32 KiB memory, and a few hundred of
/// them hung the connection. Its count is kept for the limit `begin` enforces.
func mhdRequestStarted(
    _ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    guard let uri, let mark = strchr(uri, Int32(UInt8(ascii: "?"))) else { return nil }
    let context = RequestContext(rawQuery: String(cString: mark + 1))
    context.queryParameters = trustbed_mhd_detach_query(mark + 1)
    return Unmanaged.passRetained(context).toOpaque()
}

func mhdRequestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ reason: MHD_RequestTerminationCode
) {
    guard let state, let raw = state.pointee else { return }
    state.pointee = nil
    // The server's own address marks a request that needed no context (see RequestPipeline).
    if raw != cls { Unmanaged<RequestContext>.fromOpaque(raw).release() }
}
