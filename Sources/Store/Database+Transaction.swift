import CSQLite

extension Database {
    /// BEGIN IMMEDIATE … COMMIT, ROLLBACK on any thrown error, so a failure never leaves a
    /// half-written record.
    ///
    /// The database lock is held for the whole body, so other threads wait rather than
    /// interleave; the body must not wait on another thread that uses this database.
    /// Nested calls become savepoints: an inner failure undoes only the inner work if the
    /// outer body catches it.
    public func transaction<T>(_ body: (Database) throws -> T) throws -> T {
        try lock.withLock { () throws -> T in
            let level = try beginTransaction()
            do {
                let value = try body(self)
                try commitTransaction(level)
                return value
            } catch {
                rollbackTransaction(level)
                throw error
            }
        }
    }

    /// `transaction` for bodies that only throw `StoreError`, so repositories keep typed throws.
    func atomically<T>(_ body: (Database) throws(StoreError) -> T) throws(StoreError) -> T {
        try lock.withLock { () throws(StoreError) -> T in
            let level = try beginTransaction()
            do throws(StoreError) {
                let value = try body(self)
                try commitTransaction(level)
                return value
            } catch {
                rollbackTransaction(level)
                throw error
            }
        }
    }

    // The savepoint name is built from our own integer, never from caller input.
    private func savepoint(_ level: Int) -> String { "trustbed_nested_\(level)" }

    /// Must run under `lock`; returns the nesting level to hand to commit or rollback.
    private func beginTransaction() throws(StoreError) -> Int {
        let level = transactionDepth
        // IMMEDIATE takes the write lock up front, so a read-then-write body cannot fail
        // half-way with SQLITE_BUSY when another process writes.
        try execute(level == 0 ? "BEGIN IMMEDIATE" : "SAVEPOINT \(savepoint(level))")
        transactionDepth = level + 1
        return level
    }

    private func commitTransaction(_ level: Int) throws(StoreError) {
        // On failure the transaction is still open; the caller's catch rolls it back.
        try execute(level == 0 ? "COMMIT" : "RELEASE \(savepoint(level))")
        transactionDepth = level
    }

    private func rollbackTransaction(_ level: Int) {
        defer { transactionDepth = level }
        // SQLite may already have rolled back on its own (e.g. SQLITE_FULL); rolling back
        // again would only fail, so these errors carry no information and are dropped.
        guard isInsideSQLTransaction else { return }
        if level == 0 {
            try? execute("ROLLBACK")
        } else {
            try? execute("ROLLBACK TO \(savepoint(level))")
            try? execute("RELEASE \(savepoint(level))")
        }
    }
}
