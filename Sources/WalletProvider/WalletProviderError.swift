import Store

/// Every refusal of the Wallet Provider, with the error code the IT-Wallet specifications give
/// its endpoints: the registration and attestation endpoints answer a malformed request with
/// their own `bad_request` (not OAuth's generic `invalid_request`), a request that is well
/// formed but not acceptable with 403 `invalid_request`, and a device that fails its
/// integrity check with 403 `integrity_check_error`. Rendered by `Endpoints/`.
public struct WalletProviderError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case badRequest = "bad_request"
        case invalidRequest = "invalid_request"
        case integrityCheckError = "integrity_check_error"
        case notFound = "not_found"
        case unauthorized = "unauthorized"
        case serverError = "server_error"
        case temporarilyUnavailable = "temporarily_unavailable"
        /// Device transfer (issue 21, item 5): a transfer call the session's state does not allow.
        case invalidTransferState = "invalid_transfer_state"
        /// Device transfer: the destination's app is older than the source's.
        case appVersionMismatch = "app_version_mismatch"
    }

    public let codeValue: Code
    public let description: String
    /// For `server_error`: what failed, for the operator's log only.
    public var cause: String?

    public init(_ code: Code, _ description: String, cause: String? = nil) {
        self.codeValue = code
        self.description = description
        self.cause = cause
    }

    public static func badRequest(_ why: String) -> WalletProviderError { .init(.badRequest, why) }
    /// 403 `invalid_request`: well formed, but not acceptable (nonce, attestation, tag).
    public static func refused(_ why: String) -> WalletProviderError { .init(.invalidRequest, why) }

    public var statusCode: Int {
        switch codeValue {
        case .badRequest: 400
        case .invalidRequest, .integrityCheckError, .appVersionMismatch: 403
        case .invalidTransferState: 409
        case .notFound: 404
        case .unauthorized: 401
        case .serverError: 500
        case .temporarilyUnavailable: 503
        }
    }

    /// A failed store is the server's fault (500), or a busy one (503), never the client's.
    public static func store(_ error: StoreError) -> WalletProviderError {
        // SQLITE_BUSY (5) and SQLITE_LOCKED (6): another writer held the file past the timeout.
        if case .sqlite(let code, _) = error, code == 5 || code == 6 {
            return WalletProviderError(.temporarilyUnavailable, "the database is busy; retry", cause: "\(error)")
        }
        return WalletProviderError(.serverError, "the wallet provider could not store the request", cause: "\(error)")
    }
}
