import JSON

extension WalletProvider {
    /// THE HOOK for device transfer (issue 21, item 5): the account's transfer sessions as the
    /// admin view lists them (`{"id", "role", "state", "created_at", "updated_at", "expires_at"}`
    /// each), as source or destination. Empty until device transfer is built.
    func accountTransferSessions(_ account: String) throws(WalletProviderError) -> [JSONValue] {
        []
    }
}
