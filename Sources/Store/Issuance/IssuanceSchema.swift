/// The PID Provider's state (migration step 2). Every row carries the `issuer` (the credential
/// issuer's entity ID), so several issuers share one file. Single-use values (codes, nonces,
/// request URIs, DPoP `jti`s) are consumed by one conditional UPDATE or INSERT whose change
/// count says who won, so 50 concurrent replays leave exactly one winner.
enum IssuanceSchema {
    static let version2 = [
        // A credential offer (OpenID4VCI §4.1). `pre_authorized_code` and `issuer_state` are the
        // grant values it carries; `redeemed_at` marks the pre-authorized code used.
        """
        CREATE TABLE issuance_offers (
            id TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            persona TEXT NOT NULL,
            configuration_ids TEXT NOT NULL,
            grant_type TEXT NOT NULL,
            pre_authorized_code TEXT UNIQUE,
            tx_code TEXT,
            tx_code_failures INTEGER NOT NULL DEFAULT 0,
            issuer_state TEXT UNIQUE,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            redeemed_at INTEGER
        ) STRICT
        """,
        // A pushed authorization request (RFC 9126) and, once the person logged in, its outcome.
        """
        CREATE TABLE issuance_authorization_requests (
            request_uri TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            client_id TEXT NOT NULL,
            parameters TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        ) STRICT
        """,
        // An authorization code; `grant` is the JSON of what it authorizes (redirect URI, PKCE
        // challenge, persona, configurations, authorization_details, DPoP key thumbprint).
        """
        CREATE TABLE issuance_codes (
            code TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            client_id TEXT NOT NULL,
            grant TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        ) STRICT
        """,
        // An access token, stored by its SHA-256 (base64url), never in clear.
        """
        CREATE TABLE issuance_tokens (
            token_hash TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            client_id TEXT,
            persona TEXT NOT NULL,
            grant TEXT NOT NULL,
            dpop_jkt TEXT,
            issued_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL
        ) STRICT
        """,
        // Server nonces: `c_nonce` (OpenID4VCI §7) and `DPoP-Nonce` (RFC 9449 §8).
        """
        CREATE TABLE issuance_nonces (
            nonce TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            purpose TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        ) STRICT
        """,
        // `jti`s of DPoP proofs and client attestation PoPs already seen, until they expire.
        """
        CREATE TABLE issuance_jtis (
            issuer TEXT NOT NULL,
            purpose TEXT NOT NULL,
            jti TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (issuer, purpose, jti)
        ) STRICT
        """,
        // A deferred issuance (OpenID4VCI §9): the request to finish once `ready_at` has passed.
        """
        CREATE TABLE issuance_transactions (
            id TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            token_hash TEXT NOT NULL,
            request TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            ready_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            delivered_at INTEGER
        ) STRICT
        """,
        // One row per issued credential, without claim values. Its status list entry is the
        // pair (status_uri, status_index), unique, so no two credentials share an index; the
        // status list itself is built from these rows.
        """
        CREATE TABLE issued_credentials (
            id TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            persona TEXT NOT NULL,
            configuration_id TEXT NOT NULL,
            status_uri TEXT NOT NULL,
            status_index INTEGER NOT NULL,
            status INTEGER NOT NULL DEFAULT 0,
            key_thumbprint TEXT NOT NULL,
            notification_id TEXT,
            notification_event TEXT,
            issued_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            UNIQUE (status_uri, status_index)
        ) STRICT
        """,
        "CREATE INDEX issued_credentials_by_persona ON issued_credentials (issuer, persona)",
        "CREATE INDEX issued_credentials_by_notification ON issued_credentials (issuer, notification_id)",
        "CREATE INDEX issued_credentials_by_status ON issued_credentials (status_uri, status) WHERE status <> 0",
        // The status lists an issuer has opened, in order; credentials go to the newest one
        // until it is half full (random indexes stay cheap to find), then a new one opens.
        """
        CREATE TABLE status_lists (
            uri TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            bits INTEGER NOT NULL,
            size INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        ) STRICT
        """,
    ]
}
