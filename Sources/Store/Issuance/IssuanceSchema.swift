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

extension IssuanceSchema {
    /// Migration step 3: fewer b-trees written per issuance. In WAL mode every commit writes
    /// each page it dirtied (1 KiB frames) and a checkpoint copies it again, and each b-tree an
    /// insert touches is at least one such page (a random leaf for a random key). WAL frames,
    /// bytes and SQLite's instructions per flow before and after: docs/performance.md.
    static let version3 = [
        // The seen `jti`s keyed by their primary key alone: a rowid table stored each row in
        // its own b-tree plus the key's automatic index, two pages per recorded nonce or DPoP
        // proof; rows are small (~120 bytes), as WITHOUT ROWID wants.
        """
        CREATE TABLE issuance_jtis_v3 (
            issuer TEXT NOT NULL,
            purpose TEXT NOT NULL,
            jti TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (issuer, purpose, jti)
        ) STRICT, WITHOUT ROWID
        """,
        "INSERT INTO issuance_jtis_v3 (issuer, purpose, jti, expires_at) SELECT issuer, purpose, jti, expires_at FROM issuance_jtis",
        "DROP TABLE issuance_jtis",
        "ALTER TABLE issuance_jtis_v3 RENAME TO issuance_jtis",
        // Offers with partial UNIQUE indexes: a pre-authorized offer has no `issuer_state` and an
        // authorization code offer no `pre_authorized_code`, yet column UNIQUE constraints index
        // the NULLs too, one more page written per offer. (A column constraint cannot be
        // dropped, so the table is rebuilt.) Rows keep their rowids; nothing reads them.
        """
        CREATE TABLE issuance_offers_v3 (
            id TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            persona TEXT NOT NULL,
            configuration_ids TEXT NOT NULL,
            grant_type TEXT NOT NULL,
            pre_authorized_code TEXT,
            tx_code TEXT,
            tx_code_failures INTEGER NOT NULL DEFAULT 0,
            issuer_state TEXT,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            redeemed_at INTEGER
        ) STRICT
        """,
        """
        INSERT INTO issuance_offers_v3 (rowid, id, issuer, persona, configuration_ids, grant_type, pre_authorized_code,
            tx_code, tx_code_failures, issuer_state, created_at, expires_at, redeemed_at)
        SELECT rowid, id, issuer, persona, configuration_ids, grant_type, pre_authorized_code,
            tx_code, tx_code_failures, issuer_state, created_at, expires_at, redeemed_at FROM issuance_offers
        """,
        "DROP TABLE issuance_offers",
        "ALTER TABLE issuance_offers_v3 RENAME TO issuance_offers",
        """
        CREATE UNIQUE INDEX issuance_offers_by_pre_authorized_code ON issuance_offers (pre_authorized_code)
            WHERE pre_authorized_code IS NOT NULL
        """,
        "CREATE UNIQUE INDEX issuance_offers_by_issuer_state ON issuance_offers (issuer_state) WHERE issuer_state IS NOT NULL",
        // No query uses it: the one listing by persona (an admin and CLI command) has optional
        // filters (`? IS NULL OR persona = ?`) that SQLite answers with a scan of the table
        // anyway (EXPLAIN QUERY PLAN), while every issuance wrote a page of it.
        "DROP INDEX issued_credentials_by_persona",
        // The notification endpoint's lookup, keyed by the notification id alone: it is 128
        // random bits, so the issuer (a URL of ~40 bytes in every entry) selected nothing the
        // id did not, and halving the entries halves how often a leaf splits (each split
        // writes two more pages and the file header). The query still checks the issuer.
        "DROP INDEX issued_credentials_by_notification",
        "CREATE INDEX issued_credentials_by_notification ON issued_credentials (notification_id)",
    ]
}

extension IssuanceSchema {
    /// Migration step 4: the one index an issuance must write at a random place made small.
    /// A credential's status list entry is drawn at random (Token Status List §12.5), so its
    /// UNIQUE (list, index) entry lands on a random leaf; keyed by the list's URL (~45 bytes)
    /// that index held ~17 entries per 1 KiB page, 2,000 pages for a half-full list, more than
    /// SQLite's 2 MiB page cache, so nearly every issuance read its leaf back from the file and
    /// split one every few inserts. Keyed by a small integer list id instead it holds ~90 per page.
    /// `status_uri` stays in each row for readers of the file (Tests/bench/issuance.sh's
    /// kill -9 check, sqlite3 users); lookups go through the id.
    static let version4 = [
        // A stable list id: an INTEGER PRIMARY KEY, which VACUUM never renumbers (a plain
        // rowid it may). Lists keep their rowids, and so their order.
        """
        CREATE TABLE status_lists_v4 (
            id INTEGER PRIMARY KEY,
            uri TEXT UNIQUE NOT NULL,
            issuer TEXT NOT NULL,
            bits INTEGER NOT NULL,
            size INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        ) STRICT
        """,
        "INSERT INTO status_lists_v4 (id, uri, issuer, bits, size, created_at) SELECT rowid, uri, issuer, bits, size, created_at FROM status_lists",
        // A record always names a list the issuer opened in the same transaction; should one
        // not (a file edited by hand), its list is recorded with the only layout ever used
        // (2 bits, 65,536 entries) rather than the record dropped.
        """
        INSERT INTO status_lists_v4 (uri, issuer, bits, size, created_at)
        SELECT status_uri, MIN(issuer), 2, 65536, MIN(issued_at) FROM issued_credentials
        WHERE status_uri NOT IN (SELECT uri FROM status_lists_v4) GROUP BY status_uri ORDER BY MIN(rowid)
        """,
        "DROP TABLE status_lists",
        "ALTER TABLE status_lists_v4 RENAME TO status_lists",
        """
        CREATE TABLE issued_credentials_v4 (
            id TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            persona TEXT NOT NULL,
            configuration_id TEXT NOT NULL,
            status_uri TEXT NOT NULL,
            status_list INTEGER NOT NULL,
            status_index INTEGER NOT NULL,
            status INTEGER NOT NULL DEFAULT 0,
            key_thumbprint TEXT NOT NULL,
            notification_id TEXT,
            notification_event TEXT,
            issued_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            UNIQUE (status_list, status_index)
        ) STRICT
        """,
        """
        INSERT INTO issued_credentials_v4 (rowid, id, issuer, persona, configuration_id, status_uri, status_list, status_index,
            status, key_thumbprint, notification_id, notification_event, issued_at, expires_at)
        SELECT c.rowid, c.id, c.issuer, c.persona, c.configuration_id, c.status_uri, l.id, c.status_index,
            c.status, c.key_thumbprint, c.notification_id, c.notification_event, c.issued_at, c.expires_at
        FROM issued_credentials c JOIN status_lists l ON l.uri = c.status_uri
        """,
        "DROP TABLE issued_credentials",
        "ALTER TABLE issued_credentials_v4 RENAME TO issued_credentials",
        "CREATE INDEX issued_credentials_by_notification ON issued_credentials (notification_id)",
        "CREATE INDEX issued_credentials_by_status ON issued_credentials (status_list, status) WHERE status <> 0",
    ]
}

extension IssuanceSchema {
    /// Migration step 5: who attested a credential's holder key (issue 18, OpenID4VCI 1.0
    /// Appendix D). Nullable columns, so records of earlier versions (and of proofs without a
    /// key attestation) read as "not attested"; ADD COLUMN rewrites no row.
    static let version5 = [
        "ALTER TABLE issued_credentials ADD COLUMN key_attestation_issuer TEXT",
        "ALTER TABLE issued_credentials ADD COLUMN key_storage TEXT",
    ]
}
