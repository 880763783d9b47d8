#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The methods the server tells apart. Anything else is answered with 405 before a handler
/// sees it.
enum RequestMethod {
    case get, head, post, options, other

    init(_ method: UnsafePointer<CChar>) {
        if strcmp(method, "GET") == 0 { self = .get }
        else if strcmp(method, "HEAD") == 0 { self = .head }
        else if strcmp(method, "POST") == 0 { self = .post }
        else if strcmp(method, "OPTIONS") == 0 { self = .options }
        else { self = .other }
    }

    /// The method as a string; literals for the common ones so the hot path allocates nothing.
    func name(_ method: UnsafePointer<CChar>) -> String {
        switch self {
        case .get: return "GET"
        case .head: return "HEAD"
        case .post: return "POST"
        case .options: return "OPTIONS"
        case .other: return String(cString: method)
        }
    }
}
