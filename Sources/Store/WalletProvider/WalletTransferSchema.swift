/// Device transfer sessions (issue 21, item 5; the NL wallet's "wallet transfer"): a new phone
/// (the destination account) asks for the wallet of an old one (the source account) of the same
/// person, and the provider relays the old phone's encrypted wallet to it. One row per session.
enum WalletTransferSchema {
    /// `id`: an unpredictable UUID (it travels in the destination's QR code, and knowing it is
    /// half of what the source needs to join). `source` is null until the source confirms.
    /// `state`: `created`, `ready_for_transfer`, `ready_for_download`, `completed`, `cancelled`.
    /// `payload`: the source's compact JWE to the destination's key, kept only while the
    /// destination may still download it (cleared when the session ends). `ended_by`: who moved
    /// the session to `completed` or `cancelled` (`source`, `destination`, `admin`, `expiry`).
    static let version12 = [
        """
        CREATE TABLE wallet_provider_transfer_sessions (
            provider TEXT NOT NULL,
            id TEXT NOT NULL,
            destination TEXT NOT NULL,
            source TEXT,
            state TEXT NOT NULL,
            destination_app_version TEXT NOT NULL,
            source_app_version TEXT,
            payload TEXT,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            ended_at INTEGER,
            ended_by TEXT,
            PRIMARY KEY (provider, id)
        ) STRICT
        """,
        "CREATE INDEX wallet_provider_transfer_sessions_by_destination ON wallet_provider_transfer_sessions (provider, destination)",
        "CREATE INDEX wallet_provider_transfer_sessions_by_source ON wallet_provider_transfer_sessions (provider, source)",
        // The purge tick looks only at sessions still open (a partial index: ended ones cost nothing).
        """
        CREATE INDEX wallet_provider_transfer_sessions_open ON wallet_provider_transfer_sessions (expires_at)
        WHERE state IN ('created', 'ready_for_transfer', 'ready_for_download')
        """,
    ]
}
