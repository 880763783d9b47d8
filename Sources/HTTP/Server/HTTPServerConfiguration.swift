#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct HTTPServerConfiguration: Sendable {
    /// IPv4 or IPv6 literal, or "localhost" (127.0.0.1). The server binds only there, so a
    /// demo federation on a laptop is not reachable from the network unless asked for.
    public var host: String
    /// 0 lets the kernel choose (tests); read `HTTPServer.boundPort` afterwards.
    public var port: UInt16
    /// Worker threads, each with its own event loop.
    public var threads: Int
    /// Largest request body accepted; larger ones get 413 and are never buffered.
    public var bodyLimit: Int
    /// Seconds of inactivity before a connection is dropped (slowloris protection).
    public var connectionTimeout: Int
    /// Connections open at once, in all.
    public var connectionLimit: Int
    /// Connections open at once from one client address (0: no cap of its own). Without it one
    /// address holding `connectionLimit` idle connections locks every other client out until
    /// `connectionTimeout`; with it, its excess connections are closed at accept.
    public var perAddressConnectionLimit: Int
    /// Query parameters a request may carry; beyond that it gets a JSON 414 and its connection is
    /// closed. The largest requests served (OAuth authorization, federation `list` with filters)
    /// take about 20, so this only stops junk, e.g. thousands of repeats of an ignored parameter.
    public var queryParameterLimit = 100
    /// Bytes the memo of reusable answers may hold, shared by all worker threads (see `ResponseMemo`).
    public var memoBytes = 4 << 20

    public init(
        host: String = "127.0.0.1", port: UInt16 = 8080, threads: Int = HTTPServerConfiguration.activeCores,
        bodyLimit: Int = 1 << 20, connectionTimeout: Int = 30, connectionLimit: Int = 1024,
        perAddressConnectionLimit: Int = HTTPServerConfiguration.defaultPerAddressConnectionLimit
    ) {
        self.host = host
        self.port = port
        self.threads = threads
        self.bodyLimit = bodyLimit
        self.connectionTimeout = connectionTimeout
        self.connectionLimit = connectionLimit
        self.perAddressConnectionLimit = perAddressConnectionLimit
    }

    /// 128 of the default 1,024: a load generator or a proxy on one address still gets many
    /// connections, and eight such clients cannot fill the server. Behind a reverse proxy every
    /// client has the proxy's address: raise it (`serve --per-address-connections`).
    public static let defaultPerAddressConnectionLimit = 128

    /// Online processors, at least 1.
    public static var activeCores: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
