import Cryptography
import Foundation
import Store

/// The device transfer state machine (see `TransferSessionState`) over the session store and
/// the accounts. Each step is one transaction: it reads the session, checks the caller's side
/// and the state, and moves session and accounts together. A step retried after it succeeded
/// answers as it did (the session is already where that step put it); a step the state does
/// not allow is 409 `invalid_transfer_state`; an id that is not a session of the caller's
/// account is 404 `not_found`, the same answer as an id that does not exist.
public struct TransferSessions: Sendable {
    public let provider: String
    let database: Database
    let accounts: any TransferAccounts
    /// Seconds a session lives (`transfer_lifetime`).
    public let lifetime: Int64

    public init(provider: String, database: Database, accounts: any TransferAccounts, lifetime: Int64) {
        self.provider = provider
        self.database = database
        self.accounts = accounts
        self.lifetime = lifetime
    }

    var repository: TransferSessionRepository { TransferSessionRepository(database: database) }

    /// What the destination gets from `receive_payload`.
    public enum Download: Sendable, Equatable {
        /// The source has not sent its wallet yet.
        case pending
        case cancelled
        case payload(String)
    }

    // MARK: - Destination

    /// Opens a session for a destination account (the first recovery code disclosure of a new
    /// phone whose code an active account holds). A destination with an open `created` session
    /// gets that one back, so a retried disclosure does not leave a stray session behind.
    public func create(destination: String, appVersion: AppVersion, now: Int64) throws(WalletProviderError) -> TransferSessionRecord {
        try atomically { () throws -> TransferSessionRecord in
            if let open = try repository.openSession(provider: provider, destination: destination) {
                if open.expiresAt > now && open.sessionState == .created { return open }
                if open.expiresAt <= now { try end(open, by: .expiry, now: now) }
            }
            let session = TransferSessionRecord(
                provider: provider, id: Self.newID(), destination: destination, state: TransferSessionState.created.rawValue,
                destinationAppVersion: appVersion.description, createdAt: now, updatedAt: now, expiresAt: now + lifetime)
            try repository.insert(session)
            return session
        }
    }

    /// The destination's open session still waiting for its source (`created`, not expired):
    /// what a retried first disclosure gets back.
    public func openCreatedSession(destination: String, now: Int64) throws(WalletProviderError) -> TransferSessionRecord? {
        try atomically { () throws -> TransferSessionRecord? in
            guard let open = try repository.openSession(provider: provider, destination: destination),
                  open.sessionState == .created, open.expiresAt > now else { return nil }
            return open
        }
    }

    /// `receive_payload`: pending until the source sent its wallet, then the payload (again on
    /// every retry, until the destination completes).
    public func receive(id: String, destination: String, now: Int64) throws(WalletProviderError) -> Download {
        let session = try settled(id: id, now: now)
        try require(session, side: .destination, account: destination, step: "receive_payload")
        switch session.sessionState {
        case .created, .readyForTransfer: return .pending
        case .readyForDownload: return .payload(session.payload ?? "")
        case .cancelled: return .cancelled
        case .completed: throw Self.wrongState(session, "receive_payload")
        }
    }

    /// `complete_transfer`: the source's keys move to the destination, the source account is
    /// `transferred` (its instances get no more wallet attestations), the payload is forgotten.
    public func complete(id: String, destination: String, now: Int64) throws(WalletProviderError) -> TransferSessionRecord {
        _ = try settled(id: id, now: now)
        return try atomically { () throws -> TransferSessionRecord in
            let session = try load(id)
            try require(session, side: .destination, account: destination, step: "complete_transfer")
            switch session.sessionState {
            case .completed: return session
            case .readyForDownload:
                guard let source = session.source else { throw Self.wrongState(session, "complete_transfer") }
                try accounts.moveKeys(from: source, to: destination, now: now)
                guard try accounts.moveState(of: source, from: TransferAccountState.transferring, to: TransferAccountState.transferred, now: now) else {
                    throw WalletProviderError(.invalidTransferState, "the source account is no longer transferring")
                }
                return try move(session, to: .completed, by: .destination, now: now)
            default: throw Self.wrongState(session, "complete_transfer")
            }
        }
    }

    // MARK: - Source

    /// `confirm_transfer_session`: the source joins a `created` session; both accounts must hold
    /// the same recovery code and the destination's app must be at least as new as the source's.
    /// The source account becomes `transferring`.
    public func confirm(id: String, source: String, appVersion: AppVersion, now: Int64) throws(WalletProviderError) -> TransferSessionRecord {
        _ = try settled(id: id, now: now)
        return try atomically { () throws -> TransferSessionRecord in
            let session = try load(id)
            if session.destination == source {
                throw WalletProviderError.refused("confirm_transfer_session is the source's step; this account is the session's destination")
            }
            if let bound = session.source {
                guard bound == source else { throw Self.unknown(id) }
                if session.sessionState == .readyForTransfer { return session }
                throw Self.wrongState(session, "confirm_transfer_session")
            }
            guard session.sessionState == .created else { throw Self.wrongState(session, "confirm_transfer_session") }
            // A session of another person is not this account's to see.
            guard try accounts.sameRecoveryCode(source, session.destination) else { throw Self.unknown(id) }
            guard let destinationVersion = AppVersion(session.destinationAppVersion), appVersion <= destinationVersion else {
                throw WalletProviderError(.appVersionMismatch,
                    "the destination's app (\(session.destinationAppVersion)) is older than the source's (\(appVersion)); update it first")
            }
            let state = try accounts.state(of: source)
            guard try accounts.moveState(of: source, from: TransferAccountState.active, to: TransferAccountState.transferring, now: now) else {
                throw WalletProviderError(.invalidTransferState, "the source account is \(state ?? "unknown"), not active")
            }
            var next = session
            next.source = source
            next.sourceAppVersion = appVersion.description
            return try move(next, from: session.state, to: .readyForTransfer, by: nil, now: now)
        }
    }

    /// `send_wallet_payload`: stores the source's encrypted wallet for the destination. The
    /// same payload again is a retry and answers the same; another one once stored is 409.
    public func send(id: String, source: String, payload: String, now: Int64) throws(WalletProviderError) -> TransferSessionRecord {
        try EncryptedTransferPayload.validate(payload)
        _ = try settled(id: id, now: now)
        return try atomically { () throws -> TransferSessionRecord in
            let session = try load(id)
            try require(session, side: .source, account: source, step: "send_wallet_payload")
            switch session.sessionState {
            case .readyForTransfer:
                var next = session
                next.payload = payload
                return try move(next, from: session.state, to: .readyForDownload, by: nil, now: now)
            case .readyForDownload where session.payload == payload: return session
            default: throw Self.wrongState(session, "send_wallet_payload")
            }
        }
    }

    // MARK: - Either side

    /// `check_transfer_status`: the session as the caller may see it.
    public func status(id: String, account: String, now: Int64) throws(WalletProviderError) -> TransferSessionRecord {
        let session = try settled(id: id, now: now)
        guard session.side(of: account) != nil else { throw Self.unknown(id) }
        return session
    }

    /// `cancel_transfer`, from either side once paired: the session is `cancelled`, the payload
    /// forgotten, the source account `active` again. A retry answers the same.
    public func cancel(id: String, account: String, now: Int64) throws(WalletProviderError) -> TransferSessionRecord {
        _ = try settled(id: id, now: now)
        return try atomically { () throws -> TransferSessionRecord in
            let session = try load(id)
            guard let side = session.side(of: account) else { throw Self.unknown(id) }
            if session.sessionState == .cancelled { return session }
            guard session.sessionState.isCancellableBySide else { throw Self.wrongState(session, "cancel_transfer") }
            return try end(session, by: side, now: now)
        }
    }

    // MARK: - Admin and housekeeping

    /// The admin's cancel (the instances page): any open session, whatever its state.
    public func cancelAsAdmin(id: String, now: Int64) throws(WalletProviderError) -> TransferSessionRecord {
        _ = try settled(id: id, now: now)
        return try atomically { () throws -> TransferSessionRecord in
            let session = try load(id)
            guard session.sessionState.isOpen else { throw Self.wrongState(session, "cancel") }
            return try end(session, by: .admin, now: now)
        }
    }

    /// Ends every open session past its lifetime (the purge tick); returns how many.
    public func expireDue(now: Int64) throws(WalletProviderError) -> Int {
        try atomically { () throws -> Int in
            let due = try repository.listDue(provider: provider, now: now)
            for session in due { try end(session, by: .expiry, now: now) }
            return due.count
        }
    }

    public func sessions(account: String, now: Int64) throws(WalletProviderError) -> [TransferSessionRecord] {
        _ = try expireDue(now: now)
        return try atomically { () throws in try repository.list(provider: provider, account: account) }
    }

    public func openSessions(now: Int64) throws(WalletProviderError) -> [TransferSessionRecord] {
        _ = try expireDue(now: now)
        return try atomically { () throws in try repository.listOpen(provider: provider) }
    }

    // MARK: - Steps

    /// The session, with its expiry settled first in a transaction of its own: a step that is
    /// then refused does not undo the settling.
    func settled(id: String, now: Int64) throws(WalletProviderError) -> TransferSessionRecord {
        try atomically { () throws -> TransferSessionRecord in
            let session = try load(id)
            if session.sessionState.isOpen && session.expiresAt <= now { return try end(session, by: .expiry, now: now) }
            return session
        }
    }

    private func load(_ id: String) throws -> TransferSessionRecord {
        guard let session = try repository.find(provider: provider, id: id) else { throw Self.unknown(id) }
        return session
    }

    /// Refuses a step of one side taken by the other (403) or by an account of neither (404).
    private func require(_ session: TransferSessionRecord, side: TransferActor, account: String, step: String) throws(WalletProviderError) {
        switch session.side(of: account) {
        case side: return
        case nil: throw Self.unknown(session.id)
        default: throw .refused("\(step) is the \(side.rawValue)'s step; this account is the session's \(side == .source ? "destination" : "source")")
        }
    }

    /// Ends an open session: `cancelled` (or by expiry), payload dropped, source back to `active`.
    @discardableResult
    private func end(_ session: TransferSessionRecord, by actor: TransferActor, now: Int64) throws -> TransferSessionRecord {
        if let source = session.source {
            _ = try accounts.moveState(of: source, from: TransferAccountState.transferring, to: TransferAccountState.active, now: now)
        }
        return try move(session, to: .cancelled, by: actor, now: now)
    }

    private func move(_ session: TransferSessionRecord, from: String? = nil, to state: TransferSessionState, by actor: TransferActor?,
                      now: Int64) throws -> TransferSessionRecord {
        var next = session
        next.state = state.rawValue
        next.updatedAt = now
        if !state.isOpen {
            next.payload = nil
            next.endedAt = now
            next.endedBy = actor?.rawValue
        }
        guard try repository.replace(next, whenState: from ?? session.state) else {
            throw WalletProviderError(.invalidTransferState, "the transfer session changed meanwhile; retry")
        }
        return next
    }

    private func atomically<T>(_ body: () throws -> T) throws(WalletProviderError) -> T {
        do {
            return try database.transaction { _ in try body() }
        } catch let error as WalletProviderError {
            throw error
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw WalletProviderError(.serverError, "the transfer session could not be stored", cause: "\(error)")
        }
    }

    static func unknown(_ id: String) -> WalletProviderError {
        WalletProviderError(.notFound, "no transfer session \(id) of this account")
    }

    static func wrongState(_ session: TransferSessionRecord, _ step: String) -> WalletProviderError {
        WalletProviderError(.invalidTransferState, "\(step) is not allowed while the transfer session is \(session.state)")
    }

    /// A random (version 4) UUID from the CSPRNG, the form the NL wallet's session ids take.
    static func newID() -> String {
        var bytes = SecureRandom.bytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])).uuidString.lowercased()
    }
}
