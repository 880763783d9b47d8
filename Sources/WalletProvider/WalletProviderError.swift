import JSON
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
        // NL accounts and their instructions (issue 21; docs/wallet-provider.md, "NL accounts").
        /// 400: an unknown instruction name, or params of the wrong shape.
        case invalidInstruction = "invalid_instruction"
        /// 403: the instruction's PIN signature is wrong (the body says how many tries are left).
        case invalidPIN = "invalid_pin"
        /// 403: the account is blocked after too many wrong PINs (only PIN recovery is accepted).
        case accountBlocked = "account_blocked"
        /// 409: the instruction is not accepted in the account's current state.
        case invalidAccountState = "invalid_account_state"
        /// 403: a disclosed recovery code differs from the one the account holds.
        case recoveryCodeMismatch = "recovery_code_mismatch"
        /// 403: PID renewal asked for while the PID is still valid (i-nlrec).
        case renewalNotNeeded = "renewal_not_needed"
        /// 409: a device transfer call in the wrong session state (i-nltx).
        case invalidTransferState = "invalid_transfer_state"
    }

    public let codeValue: Code
    public let description: String
    /// For `server_error`: what failed, for the operator's log only.
    public var cause: String?
    /// Members the error body carries beside `error` and `error_description` (e.g.
    /// `attempts_left` of `invalid_pin`); rendered by the instruction routes.
    public var extra: [String: JSONValue] = [:]

    public init(_ code: Code, _ description: String, cause: String? = nil) {
        self.codeValue = code
        self.description = description
        self.cause = cause
    }

    public static func badRequest(_ why: String) -> WalletProviderError { .init(.badRequest, why) }
    /// 403 `invalid_request`: well formed, but not acceptable (nonce, attestation, tag).
    public static func refused(_ why: String) -> WalletProviderError { .init(.invalidRequest, why) }
    /// 400 `invalid_instruction`: unknown name or params of the wrong shape.
    public static func invalidInstruction(_ why: String) -> WalletProviderError { .init(.invalidInstruction, why) }

    public var statusCode: Int {
        switch codeValue {
        case .badRequest: 400
        case .invalidRequest, .integrityCheckError, .invalidPIN, .accountBlocked, .recoveryCodeMismatch, .renewalNotNeeded: 403
        case .invalidInstruction: 400
        case .invalidAccountState, .invalidTransferState: 409
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
