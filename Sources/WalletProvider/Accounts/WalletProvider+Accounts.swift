import JSON
import Store

extension WalletProvider {
    /// `GET <wp>/admin/accounts/<id>` (issue 21, item 8): what support staff see of an account:
    /// its state, whether it is an NL account and how many wrong PINs it has, whether a recovery
    /// code is stored (never the code or its HMAC), its instances, how many keys the provider
    /// holds for it (never the keys), and its device transfer sessions. 404 `not_found` for an
    /// unknown account.
    public func accountSummary(_ id: String) throws(WalletProviderError) -> JSONValue {
        let now = clock.now()
        let (account, instances, keys) = try storing { () throws(StoreError) in
            try WalletInstanceValidity(database: database).settle(provider: entityID, now: now)
            let account = try WalletAccountRepository(database: database).find(provider: entityID, id: id)
            let instances = try WalletInstanceRepository(database: database).list(provider: entityID, account: id)
            let keys = try HeldKeyRepository(database: database).list(provider: entityID, account: id)
            return (account, instances, keys)
        }
        guard let account else { throw WalletProviderError(.notFound, "no account has this id") }
        return [
            "id": .string(account.id),
            "state": .string(account.state),
            "nl_account": .bool(account.pinPublicKey != nil),
            "pin_failures": .int(account.pinFailures),
            "recovery_code_stored": .bool(account.recoveryCodeHMAC != nil),
            "created_at": .int(account.createdAt),
            "updated_at": .int(account.updatedAt),
            "instances": .array(instances.map { instance in
                ["id": .string(instance.id), "state": .string(instance.state), "format": .string(instance.format),
                 "revoked": .bool(instance.revokedAt != nil)]
            }),
            "held_keys": .int(Int64(keys.count)),
            "held_keys_enabled": .int(Int64(keys.filter(\.enabled).count)),
            "transfer_sessions": .array(try accountTransferSessions(account.id)),
        ]
    }

    /// The account states by account id (the instances page shows them beside each instance).
    func accountStates() throws(WalletProviderError) -> [String: WalletAccountRecord] {
        let accounts = try storing { () throws(StoreError) in try WalletAccountRepository(database: database).list(provider: entityID) }
        return Dictionary(accounts.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
