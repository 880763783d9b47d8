/// A route path such as `/offers/{id}`: literal segments and `{name}` segments, each `{name}`
/// matching exactly one non-empty segment. Literal segments compare exactly (paths are
/// case-sensitive, RFC 3986 §6.2.2.1).
struct PathTemplate: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    let segments: [Segment]
    let description: String

    init(_ template: String) {
        precondition(template.hasPrefix("/"), "route template \(template) must start with /")
        description = template
        segments = template.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part in
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                return .parameter(String(part.dropFirst().dropLast()))
            }
            precondition(!part.contains("{") && !part.contains("}"), "route template \(template): bad segment \(part)")
            return .literal(String(part))
        }
    }

    /// No `{name}` segment: the router finds these by a dictionary lookup.
    var isLiteral: Bool { segments.allSatisfy { if case .literal = $0 { true } else { false } } }

    /// The parameters when `path` matches.
    func match(_ path: Substring) -> PathParameters? {
        var values: [(name: String, value: String)] = []
        var rest = path.dropFirst()  // the leading "/"
        for (index, segment) in segments.enumerated() {
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            let part = rest[..<end]
            switch segment {
            case .literal(let text):
                guard part == text else { return nil }
            case .parameter(let name):
                guard !part.isEmpty else { return nil }
                values.append((name: name, value: String(part)))
            }
            let isLast = index == segments.count - 1
            if isLast { guard end == rest.endIndex else { return nil } }
            else {
                guard end != rest.endIndex else { return nil }
                rest = rest[rest.index(after: end)...]
            }
        }
        return PathParameters(values)
    }
}

/// The `{name}` segments of the matched route template, percent-decoded as the path is.
public struct PathParameters: Sendable {
    public let values: [(name: String, value: String)]

    public init(_ values: [(name: String, value: String)] = []) { self.values = values }

    public subscript(_ name: String) -> String? { values.first { $0.name == name }?.value }

    /// The value of a segment the route template declares; the router never calls a handler
    /// without it, so a miss is a typo in the handler.
    public func require(_ name: String) -> String {
        guard let value = self[name] else { preconditionFailure("route has no {\(name)} segment") }
        return value
    }
}
