/// Failures of the metadata policy engine (OpenID Federation 1.0 section 6.1). The two cases
/// follow the split the public test vectors make: a policy that cannot be validated or merged
/// is `invalid_policy`; metadata that a valid policy rejects is `invalid_metadata`.
public enum MetadataPolicyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Malformed structure or operator values, illegal operator combinations, merge conflicts,
    /// or a critical operator this engine does not understand.
    case invalidPolicy(String)
    /// Applying a valid policy to the metadata failed (a check operator rejected the value,
    /// an essential parameter is missing, a parameter has a type the operator cannot act on).
    case invalidMetadata(String)

    public var code: String {
        switch self {
        case .invalidPolicy: return "invalid_policy"
        case .invalidMetadata: return "invalid_metadata"
        }
    }

    public var message: String {
        switch self {
        case .invalidPolicy(let m), .invalidMetadata(let m): return m
        }
    }

    public var description: String { "\(code): \(message)" }
}
