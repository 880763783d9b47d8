/// The Wallet Provider's state (issue 20): accounts and the wallet instances registered under
/// them. Every row carries the `provider` (the Wallet Provider's entity ID), so several
/// providers share one file. An account is the person behind one or more instances; the NL
/// recovery flows (PIN recovery, PID renewal, device transfer) will hang their per-account
/// keys off it, so instances point at it rather than carrying a person's data themselves.
enum WalletProviderSchema {
    static let version6 = [
        """
        CREATE TABLE wallet_provider_accounts (
            provider TEXT NOT NULL,
            id TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (provider, id)
        ) STRICT
        """,
        // A wallet instance (IT-Wallet "Mobile Application Instance"), keyed by the
        // `hardware_key_tag` the device gave its hardware key. `hardware_jwk` is that key's
        // public JWK; `format` the device key attestation's format (`dev`, `android`, `apple`);
        // `device_facts` what the attestation said about the device (JSON). `state` follows the
        // Wallet Solution's state machine (installed, operational, valid, uninstalled);
        // `revoked_at` marks a revoked hardware key, which no attestation request may use again.
        """
        CREATE TABLE wallet_provider_instances (
            provider TEXT NOT NULL,
            id TEXT NOT NULL,
            account TEXT NOT NULL,
            hardware_jwk TEXT NOT NULL,
            hardware_jwk_thumbprint TEXT NOT NULL,
            format TEXT NOT NULL,
            device_facts TEXT NOT NULL,
            state TEXT NOT NULL,
            reason TEXT,
            revoked_at INTEGER,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (provider, id)
        ) STRICT
        """,
        """
        CREATE INDEX wallet_provider_instances_by_account ON wallet_provider_instances (provider, account)
        """,
    ]

    /// The wallet keys each instance had attested (`<wp>/key-attestations`), by RFC 7638
    /// thumbprint: a PID Provider hosted here keeps the `cnf` thumbprint and the attestation's
    /// issuer of what it issues, so the instance a PID went to is found from them (item 8's
    /// `valid` state).
    static let version7 = [
        """
        CREATE TABLE wallet_provider_attested_keys (
            provider TEXT NOT NULL,
            thumbprint TEXT NOT NULL,
            instance TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (provider, thumbprint)
        ) STRICT
        """,
    ]

    /// Item 8's `valid` state is computed from the issued-credential records
    /// (`WalletInstanceValidityRepository`): an instance's attested keys, and the credentials
    /// issued to attested keys by key (a partial index, so issuance to keys no Wallet Provider
    /// attested pays nothing for it). `wallet_provider_person_instances` lists, per person (the
    /// PID Provider's persona id), the instances a PID of theirs went to, so "one valid instance
    /// per person" looks at a handful of rows instead of every PID the person ever got.
    static let version8 = [
        "CREATE INDEX wallet_provider_attested_keys_by_instance ON wallet_provider_attested_keys (provider, instance)",
        """
        CREATE INDEX issued_credentials_attested_by_key ON issued_credentials (key_thumbprint)
        WHERE key_attestation_issuer IS NOT NULL
        """,
        """
        CREATE TABLE wallet_provider_person_instances (
            provider TEXT NOT NULL,
            persona TEXT NOT NULL,
            instance TEXT NOT NULL,
            PRIMARY KEY (provider, persona, instance)
        ) STRICT, WITHOUT ROWID
        """,
    ]

    /// The last `integrity_assertion` an instance sent with a wallet attestation request (a Play
    /// Integrity token, or an App Attest assertion used as one) and when: kept for the person
    /// testing a wallet to inspect, never checked (this server is offline; a Play Integrity
    /// verdict needs Google's servers and the app's credentials).
    /// `assertion_counter`: the highest App Attest assertion counter an iOS instance used as its
    /// hardware signature (Apple: each assertion's counter must exceed the stored one).
    static let version9 = [
        "ALTER TABLE wallet_provider_instances ADD COLUMN integrity_assertion TEXT",
        "ALTER TABLE wallet_provider_instances ADD COLUMN integrity_assertion_at INTEGER",
        "ALTER TABLE wallet_provider_instances ADD COLUMN assertion_counter INTEGER NOT NULL DEFAULT 0",
    ]
}

extension WalletProviderSchema {
    /// NL accounts (issue 21): the provider holds the wallet's keys and acts on instructions
    /// signed by the PIN key and the hardware key.
    /// - accounts get a `state` (active, blocked, recovering_pin, renewing, transferring,
    ///   transferred, revoked), the PIN public key (JWK text), the count of wrong PINs since the
    ///   last right one, the HMAC of the recovery code (never the code), and two slots the
    ///   recovery flows use to restore an account exactly: a pending PIN key and the state
    ///   before the flow began;
    /// - `wallet_provider_held_keys`: the account's private keys, each AES-256-GCM-wrapped under
    ///   the provider's wrapping key (`Keys/<name>/wallet-provider/`), with its public JWK and
    ///   thumbprint (a PID's `cnf` is looked up by it), a `purpose` (`wallet`, or the recovery
    ///   flows' `recovery`/`renewal`) and `enabled` (a renewal disables the others);
    /// - `wallet_provider_instruction_challenges`: each challenge of
    ///   `<wp>/instructions/challenge`, for one instance, spent (deleted) by the transaction
    ///   that performs the instruction, so of concurrent uses exactly one wins.
    static let version11 = [
        "ALTER TABLE wallet_provider_accounts ADD COLUMN state TEXT NOT NULL DEFAULT 'active'",
        "ALTER TABLE wallet_provider_accounts ADD COLUMN pin_public_key TEXT",
        "ALTER TABLE wallet_provider_accounts ADD COLUMN pin_failures INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE wallet_provider_accounts ADD COLUMN recovery_code_hmac TEXT",
        "ALTER TABLE wallet_provider_accounts ADD COLUMN pending_pin_public_key TEXT",
        "ALTER TABLE wallet_provider_accounts ADD COLUMN previous_state TEXT",
        "ALTER TABLE wallet_provider_accounts ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX wallet_provider_accounts_by_recovery_code ON wallet_provider_accounts (provider, recovery_code_hmac) WHERE recovery_code_hmac IS NOT NULL",
        """
        CREATE TABLE wallet_provider_held_keys (
            provider TEXT NOT NULL,
            id TEXT NOT NULL,
            account TEXT NOT NULL,
            wrapped_key BLOB NOT NULL,
            public_jwk TEXT NOT NULL,
            thumbprint TEXT NOT NULL,
            purpose TEXT NOT NULL DEFAULT 'wallet',
            enabled INTEGER NOT NULL DEFAULT 1,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (provider, id)
        ) STRICT
        """,
        "CREATE INDEX wallet_provider_held_keys_by_account ON wallet_provider_held_keys (provider, account)",
        "CREATE INDEX wallet_provider_held_keys_by_thumbprint ON wallet_provider_held_keys (provider, thumbprint)",
        """
        CREATE TABLE wallet_provider_instruction_challenges (
            provider TEXT NOT NULL,
            challenge TEXT NOT NULL,
            instance TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (provider, challenge)
        ) STRICT, WITHOUT ROWID
        """,
        "CREATE INDEX wallet_provider_instruction_challenges_by_expiry ON wallet_provider_instruction_challenges (expires_at)",
    ]
}
