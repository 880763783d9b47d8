/// Why a certificate or CRL could not be parsed, built or validated: one code per kind of
/// failure, plus a reason for people. Validation codes mirror OpenSSL's X509_V_ERR_* groups so
/// callers (mdoc reader checks, wallet attestation checks) can map them to their own errors.
public struct CertificateError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Equatable, Sendable {
        // Parsing and building.
        case invalidEncoding
        case invalidName
        case invalidExtension
        case unsupportedKey
        case signingFailed
        // Path validation.
        case expired
        case notYetValid
        case untrustedIssuer
        case invalidSignature
        case invalidCA
        case pathLengthExceeded
        case revoked
        case crlProblem
        case missingExtendedKeyUsage
        case validationFailed(Int32)
    }

    public let code: Code
    public let reason: String
    /// Position in the chain of the certificate at fault (0 = leaf), for validation errors.
    public let depth: Int?

    public init(_ code: Code, _ reason: String, depth: Int? = nil) {
        self.code = code
        self.reason = reason
        self.depth = depth
    }

    public var description: String {
        "\(code): \(reason)" + (depth.map { " (depth \($0))" } ?? "")
    }
}
