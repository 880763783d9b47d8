public enum HTTPServerError: Error, Equatable, Sendable {
    /// The daemon could not start on host:port: the port is taken, the address is not local,
    /// or the host is not an address literal.
    case cannotBind(String, UInt16)
}
