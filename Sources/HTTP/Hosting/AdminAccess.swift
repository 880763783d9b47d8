import Cryptography

/// The admin API's check, shared by every service: `Authorization: Bearer <admin token>`,
/// anything else refused with 401. The presented token is hashed and compared with the admin
/// token's digest in constant time (`ConstantTime.equal`), so response times reveal neither how
/// much of a guess matched nor the token's length.
///
/// Built from the digest, which a service makes once, so a call neither hashes the configured
/// token again nor lower-cases a prefix.
public struct AdminAccess: Sendable {
    /// SHA-256 of the admin token.
    public let tokenDigest: [UInt8]

    public init(tokenDigest: [UInt8]) { self.tokenDigest = tokenDigest }

    public init(token: String) { tokenDigest = Digest.sha256(Array(token.utf8)) }

    /// Why a request was refused; renders as 401 `unauthorized` with a `Bearer` challenge
    /// (RFC 6750 §3: without credentials the challenge carries no error code).
    public enum Refusal: ErrorResponse, Equatable {
        /// No `Authorization` header, or not the Bearer scheme.
        case missing
        case wrongToken

        public var status: HTTPStatus { .unauthorized }
        public var code: String { "unauthorized" }
        public var errorDescription: String {
            switch self {
            case .missing: return "the admin API needs Authorization: Bearer <admin token>"
            case .wrongToken: return "wrong admin token"
            }
        }
        public var headers: [(name: String, value: String)] {
            switch self {
            case .missing: return [("WWW-Authenticate", "Bearer")]
            case .wrongToken: return [("WWW-Authenticate", "Bearer error=\"invalid_token\", error_description=\"wrong admin token\"")]
            }
        }
    }

    /// Passes when `authorization` (the header's value) is `Bearer <admin token>`; the scheme
    /// is case-insensitive (RFC 9110 §11.1).
    public func check(authorization: String?) throws(Refusal) {
        guard let authorization, authorization.utf8.count > 7, Self.hasBearerScheme(authorization) else { throw .missing }
        guard ConstantTime.equal(Digest.sha256(Array(authorization.utf8.dropFirst(7))), tokenDigest) else { throw .wrongToken }
    }

    public func check(_ request: HTTPRequest) throws(Refusal) {
        try check(authorization: request.header("authorization"))
    }

    /// Whether `authorization` starts with "bearer " in any case.
    private static func hasBearerScheme(_ authorization: String) -> Bool {
        zip(authorization.utf8, "bearer ".utf8).allSatisfy { presented, expected in
            presented == expected || (presented >= UInt8(ascii: "A") && presented <= UInt8(ascii: "Z") && presented + 32 == expected)
        }
    }
}
