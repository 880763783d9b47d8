/// The schema, as an ordered list of steps. Step `n` (1-based) brings a database to
/// `PRAGMA user_version = n`. Steps are append-only: once shipped, a step is never edited,
/// because databases in the field already ran it; change the schema by adding a step.
enum Migrations {
    /// Each step is a list of single statements, applied together in one transaction.
    static let steps: [[String]] = [version1, IssuanceSchema.version2, IssuanceSchema.version3, IssuanceSchema.version4, IssuanceSchema.version5, WalletProviderSchema.version6, WalletProviderSchema.version7,
                                    WalletProviderSchema.version8, WalletProviderSchema.version9, VerificationSchema.version10,
                                    WalletProviderSchema.version11]

    /// The version a database has after all steps.
    static var latestVersion: Int64 { Int64(steps.count) }

    /// Brings `database` up to `latestVersion`, one transaction per step, so a crash between
    /// steps leaves a database at a well-defined earlier version.
    static func apply(to database: Database) throws(StoreError) {
        let found = try userVersion(of: database)
        guard found <= latestVersion else {
            throw .cannotOpen("schema version \(found) is newer than this build supports (\(latestVersion))")
        }
        for (index, step) in steps.enumerated() where Int64(index) >= found {
            let version = Int64(index + 1)
            try database.atomically { database throws(StoreError) in
                // Re-read under the write lock: another process may have migrated meanwhile.
                guard try userVersion(of: database) < version else { return }
                for sql in step { try database.execute(sql, [], cached: false) }
                // PRAGMA takes no bound parameters; `version` is our own integer.
                try database.execute("PRAGMA user_version = \(version)", [], cached: false)
            }
        }
    }

    static func userVersion(of database: Database) throws(StoreError) -> Int64 {
        try database.query("PRAGMA user_version", [], cached: false).first?.int("user_version") ?? 0
    }

    // STRICT tables: SQLite otherwise stores whatever type it is given, and a wrong type
    // (a text timestamp, say) would silently break comparisons later.
    private static let version1 = [
        """
        CREATE TABLE trust_marks (
            id TEXT PRIMARY KEY NOT NULL,
            issuer TEXT NOT NULL,
            subject TEXT NOT NULL,
            trust_mark_type TEXT NOT NULL,
            issued_at INTEGER NOT NULL,
            expires_at INTEGER,
            revoked_at INTEGER,
            revocation_reason TEXT
        ) STRICT
        """,
        """
        CREATE INDEX trust_marks_by_issuer_type_subject
            ON trust_marks (issuer, trust_mark_type, subject)
        """,
        // A standing revocation of (issuer, type, subject): marks recorded while it exists
        // are stored as revoked.
        """
        CREATE TABLE trust_mark_revocations (
            issuer TEXT NOT NULL,
            trust_mark_type TEXT NOT NULL,
            subject TEXT NOT NULL,
            revoked_at INTEGER NOT NULL,
            reason TEXT NOT NULL,
            PRIMARY KEY (issuer, trust_mark_type, subject)
        ) STRICT
        """,
        """
        CREATE TABLE entity_keys (
            entity TEXT NOT NULL,
            kid TEXT NOT NULL,
            jwk TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            retired_at INTEGER,
            expires_at INTEGER,
            revoked_at INTEGER,
            revocation_reason TEXT,
            PRIMARY KEY (entity, kid)
        ) STRICT
        """,
        """
        CREATE TABLE statement_cache (
            url TEXT PRIMARY KEY NOT NULL,
            body TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            fetched_at INTEGER NOT NULL
        ) STRICT
        """,
        """
        CREATE TABLE settings (
            key TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
        ) STRICT
        """,
    ]
}
