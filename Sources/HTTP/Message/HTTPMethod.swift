#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request method. Methods are case-sensitive (RFC 9110 §9.1): "get" is not GET, so it is
/// `.other("get")` and no route answers it.
///
/// String literals convert, so `request.method == "POST"` reads as before.
public enum HTTPMethod: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    case get, head, post, put, delete, patch, options
    case other(String)

    public init(_ name: String) {
        switch name {
        case "GET": self = .get
        case "HEAD": self = .head
        case "POST": self = .post
        case "PUT": self = .put
        case "DELETE": self = .delete
        case "PATCH": self = .patch
        case "OPTIONS": self = .options
        default: self = .other(name)
        }
    }

    public init(stringLiteral name: String) { self.init(name) }

    /// From MHD's C string: a byte comparison, and no allocation for the standard methods.
    init(cString method: UnsafePointer<CChar>) {
        if strcmp(method, "GET") == 0 { self = .get }
        else if strcmp(method, "HEAD") == 0 { self = .head }
        else if strcmp(method, "POST") == 0 { self = .post }
        else if strcmp(method, "OPTIONS") == 0 { self = .options }
        else if strcmp(method, "PUT") == 0 { self = .put }
        else if strcmp(method, "DELETE") == 0 { self = .delete }
        else if strcmp(method, "PATCH") == 0 { self = .patch }
        else { self = .other(String(cString: method)) }
    }

    /// The method as sent on the wire; literals for the standard ones, so no allocation.
    public var name: String {
        switch self {
        case .get: return "GET"
        case .head: return "HEAD"
        case .post: return "POST"
        case .put: return "PUT"
        case .delete: return "DELETE"
        case .patch: return "PATCH"
        case .options: return "OPTIONS"
        case .other(let name): return name
        }
    }

    public var description: String { name }
}
