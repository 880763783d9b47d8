/// Why a Trust Chain fails the `constraints` of a Subordinate Statement (section 6.2).
public enum ConstraintError: Error, Equatable, Sendable, CustomStringConvertible {
    case maxPathLengthExceeded
    case namingConstraintViolated(String)
    case entityTypeNotAllowed(String)
    case malformed(String)

    public var description: String {
        switch self {
        case .maxPathLengthExceeded: return "max_path_length exceeded"
        case .namingConstraintViolated(let m): return "naming constraint violated: \(m)"
        case .entityTypeNotAllowed(let t): return "entity type \(t) is not allowed"
        case .malformed(let m): return "malformed constraints: \(m)"
        }
    }
}
