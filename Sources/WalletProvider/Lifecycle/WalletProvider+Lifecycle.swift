import JSON
import Store

/// An admin's change of an instance's state (issue 20, item 8): `revoked` (the hardware key
/// becomes unusable; `operational` and `valid` go back to `installed`) or `uninstalled` (final).
public struct InstanceStatusChange: Sendable, Equatable {
    public enum Status: String, Sendable { case revoked, uninstalled }
    public let status: Status
    /// Free text, shown in the admin list.
    public let reason: String?

    public static func parse(_ value: JSONValue) throws(WalletProviderError) -> InstanceStatusChange {
        guard let object = value.objectValue else { throw .badRequest("the body must be a JSON object") }
        guard let name = object["status"]?.stringValue, let status = Status(rawValue: name) else {
            throw .badRequest("status must be \"revoked\" or \"uninstalled\"")
        }
        var reason: String?
        if let value = object["reason"], value != .null {
            guard let text = value.stringValue, text.utf8.count <= 1_000 else { throw .badRequest("reason must be a string of at most 1000 bytes") }
            reason = text
        }
        return InstanceStatusChange(status: status, reason: reason)
    }

    public init(status: Status, reason: String?) {
        self.status = status
        self.reason = reason
    }
}

extension WalletProvider {
    /// Applies `change` to the instance `id`; returns it as it now is. 404 `not_found` for an
    /// unknown instance, 403 `invalid_request` for one already `uninstalled`.
    public func changeStatus(instance id: String, _ change: InstanceStatusChange) throws(WalletProviderError) -> WalletInstanceRecord {
        let repository = WalletInstanceRepository(database: database)
        let now = clock.now()
        let changed = try storing { () throws(StoreError) -> Bool in
            switch change.status {
            case .revoked: return try repository.revoke(provider: entityID, id: id, reason: change.reason, now: now)
            case .uninstalled: return try repository.uninstall(provider: entityID, id: id, reason: change.reason, now: now)
            }
        }
        guard let record = try storing({ () throws(StoreError) in try repository.find(provider: entityID, id: id) }) else {
            throw WalletProviderError(.notFound, "no wallet instance \(id)")
        }
        guard changed else { throw .refused("the instance is uninstalled, which is final") }
        logger.notice("wallet instance \(id) on \(entityID): \(change.status.rawValue)\(change.reason.map { " (\($0))" } ?? "")")
        return record
    }

    /// Deletes an account with its instances; 404 `not_found` when there is none.
    public func purgeAccount(_ account: String) throws(WalletProviderError) {
        let repository = WalletInstanceRepository(database: database)
        let removed = try storing { () throws(StoreError) in try repository.purgeAccount(provider: entityID, account: account) }
        guard removed > 0 else { throw WalletProviderError(.notFound, "no account \(account)") }
        logger.notice("wallet provider account \(account) on \(entityID) purged")
    }
}
