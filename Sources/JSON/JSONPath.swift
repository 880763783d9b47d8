/// Where a value sits inside a JSON document, for error messages: `metadata.openid_relying_party.client_name`,
/// `authority_hints[2]`, and `trust_mark_issuers["https://example.com/mark"][0]` for member names
/// that are not plain identifiers (so a URL used as a name stays readable and unambiguous).
public struct JSONPath: Hashable, Sendable, CustomStringConvertible {
    public enum Component: Hashable, Sendable {
        case member(String)
        case index(Int)
    }

    public private(set) var components: [Component]

    /// The document itself.
    public static let root = JSONPath(components: [])

    public init(components: [Component]) { self.components = components }

    /// A path of member names, e.g. `JSONPath("metadata")` for a reader handed one member of a
    /// larger document.
    public init(_ members: String...) { components = members.map(Component.member) }

    public var isRoot: Bool { components.isEmpty }

    public func appending(_ member: String) -> JSONPath { appending(.member(member)) }

    func appending(_ component: Component) -> JSONPath {
        var p = self
        p.components.append(component)
        return p
    }

    public func appending(index: Int) -> JSONPath {
        var p = self
        p.components.append(.index(index))
        return p
    }

    public var description: String {
        if components.isEmpty { return "(document)" }
        var out = ""
        for c in components {
            switch c {
            case .index(let i): out += "[\(i)]"
            case .member(let name) where Self.isPlain(name):
                if !out.isEmpty { out += "." }
                out += name
            case .member(let name):
                out += "[" + JSONValue.string(name).serialized() + "]"
            }
        }
        return out
    }

    /// Letters, digits, `_`, `-` and `$`, not starting with a digit: shown with dot notation.
    private static func isPlain(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(0x30...0x39).contains(first) else { return false }
        return name.utf8.allSatisfy { b in
            (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || (0x30...0x39).contains(b)
                || b == UInt8(ascii: "_") || b == UInt8(ascii: "-") || b == UInt8(ascii: "$")
        }
    }
}

/// A JSON value that does not have the shape a reader asked for, with the path to it.
/// `description` reads `authority_hints[2]: expected a string, found number`.
public struct JSONReadError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Problem: Equatable, Sendable {
        /// A required member is absent.
        case missing
        /// The value has another JSON type (`expected` is e.g. "a string", `found` a JSON type name).
        case wrongType(expected: String, found: String)
        /// The type is right but the value is not acceptable; the text says why.
        case invalid(String)
    }

    public let path: JSONPath
    public let problem: Problem

    public init(path: JSONPath, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var message: String {
        switch problem {
        case .missing: return "is required"
        case .wrongType(let expected, let found): return "expected \(expected), found \(found)"
        case .invalid(let why): return why
        }
    }

    public var description: String { "\(path): \(message)" }
}
