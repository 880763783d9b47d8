import JSON
import Store

/// `TransferAccounts` over the NL accounts and held keys, in the caller's transaction.
struct StoreTransferAccounts: TransferAccounts {
    let provider: String
    let database: Database
    let heldKeys: HeldKeys

    private var accounts: WalletAccountRepository { WalletAccountRepository(database: database) }

    func state(of account: String) throws(StoreError) -> String? {
        try accounts.find(provider: provider, id: account)?.state
    }

    func moveState(of account: String, from: String, to: String, now: Int64) throws(StoreError) -> Bool {
        try accounts.transition(provider: provider, id: account, from: [from], to: to, now: now)
    }

    func sameRecoveryCode(_ first: String, _ second: String) throws(StoreError) -> Bool {
        guard let a = try accounts.find(provider: provider, id: first)?.recoveryCodeHMAC,
              let b = try accounts.find(provider: provider, id: second)?.recoveryCodeHMAC else { return false }
        return a == b
    }

    func moveKeys(from source: String, to destination: String, now: Int64) throws {
        let keys = HeldKeyRepository(database: database)
        for key in try keys.list(provider: provider, account: source) {
            try keys.update(try heldKeys.rewrap(key, for: destination))
        }
    }
}

extension WalletProvider {
    /// The device transfer sessions of this provider (issue 21, item 5).
    public var transfers: TransferSessions {
        TransferSessions(provider: entityID, database: database, accounts: StoreTransferAccounts(provider: entityID, database: database, heldKeys: heldKeys),
                         lifetime: configuration.transferLifetime)
    }
}

extension WalletProvider {
    /// Item 5: once a device transfer completed, the wallet lives on the destination; the
    /// source account is `transferred` and its instances get no more wallet or key attestations.
    func refuseTransferredAccount(of instance: WalletInstanceRecord) throws(WalletProviderError) {
        let state = try storing { () throws(StoreError) in
            try WalletAccountRepository(database: database).find(provider: entityID, id: instance.account)?.state
        }
        if state == WalletAccountState.transferred.rawValue {
            throw .refused("this wallet instance's account was transferred to another device; it gets no more attestations")
        }
    }

    /// The account's transfer sessions for the admin view (states and times; never the payload).
    public func transferSessionsJSON(account: String) throws(WalletProviderError) -> [JSONValue] {
        try transfers.sessions(account: account, now: clock.now()).map { session in
            var out: [String: JSONValue] = [
                "id": .string(session.id), "state": .string(session.state), "role": .string(session.destination == account ? "destination" : "source"),
                "destination": .string(session.destination), "source": session.source.map(JSONValue.string) ?? .null,
                "destination_app_version": .string(session.destinationAppVersion),
                "created_at": .int(session.createdAt), "updated_at": .int(session.updatedAt), "expires_at": .int(session.expiresAt),
            ]
            if let ended = session.endedAt { out["ended_at"] = .int(ended) }
            if let by = session.endedBy { out["ended_by"] = .string(by) }
            return .object(out)
        }
    }
}
