import CSQLite

/// One SQLite file, opened in WAL mode, shared by every worker thread.
///
/// A single connection guarded by a recursive lock: every call is serialized, so writers in
/// this process never see SQLITE_BUSY from each other, and `transaction` can hold the lock
/// across its body. The busy timeout only matters when another process opens the same file.
/// That is `@unchecked Sendable`'s justification: all mutable state is touched under `lock`.
public final class Database: @unchecked Sendable {
    /// The path the database was opened with.
    public let path: String

    let lock = RecursiveLock()
    /// Nesting depth of `transaction` calls; 0 outside any transaction.
    var transactionDepth = 0
    private var connection: OpaquePointer?
    private var cache = StatementCache()
    /// For `.processCrash` files: checkpoints off the committing thread. Set once in init and
    /// kept until deinit, because the connection's commit hook points at it.
    private var checkpointer: WALCheckpointer?

    /// How far a commit is durable before it returns.
    public enum Durability: Sendable {
        /// synchronous=FULL: every commit is on disk, so a power cut loses nothing acknowledged.
        case powerCut
        /// synchronous=NORMAL: in WAL mode a commit survives a crash of the process (`kill -9`)
        /// but the last commits may be lost with power; no fsync per commit, so a write-heavy
        /// service is not bound by the disk's few thousand fsyncs a second. Checkpoints run on a
        /// background queue (`WALCheckpointer`), not inside a commit.
        case processCrash
    }

    public let durability: Durability

    /// Opens (creating, mode 0600: `createPrivately`) the file, sets journal_mode=WAL, synchronous per `durability` (FULL by
    /// default: a `kill -9` or power cut loses nothing acknowledged), foreign_keys=ON,
    /// busy_timeout=5000, and runs the migrations. ":memory:" works for tests.
    public convenience init(path: String, durability: Durability = .powerCut) throws(StoreError) {
        try self.init(path: path, durability: durability, walLimits: WALCheckpointer.Limits())
    }

    /// `walLimits`: when `.processCrash` files are checkpointed (tests use small ones).
    init(path: String, durability: Durability, walLimits: WALCheckpointer.Limits) throws(StoreError) {
        self.path = path
        self.durability = durability
        try Self.createPrivately(path)
        var handle: OpaquePointer?
        // NOMUTEX: SQLite's own per-connection mutex would only duplicate `lock`.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        // SQLite's default VFS: a commit is in the WAL, whole, when COMMIT returns.
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw .cannotOpen("\(path): \(message)")
        }
        connection = handle
        do throws(StoreError) {
            try configure(walLimits: walLimits)
            try Migrations.apply(to: self)
        } catch {
            close()
            throw .cannotOpen("\(path): \(error.summary)")
        }
    }

    deinit {
        close()
    }

    /// Closes the connection; later calls throw. Safe to call twice. Closing the last
    /// connection checkpoints the WAL into the main file.
    public func close() {
        // Outside the lock: a running checkpoint may be waiting for it. Once closed, the
        // checkpointer ignores the commits that may still come.
        checkpointer?.close()
        lock.withLock {
            cache.finalizeAll()
            sqlite3_close_v2(connection)
            connection = nil
        }
    }

    /// Runs one statement (any rows it returns are discarded).
    public func execute(_ sql: String, _ parameters: [SQLValue] = []) throws(StoreError) {
        try execute(sql, parameters, cached: true)
    }

    /// Runs one statement and returns how many rows it inserted, updated or deleted.
    @discardableResult
    public func executeCountingChanges(_ sql: String, _ parameters: [SQLValue] = []) throws(StoreError) -> Int {
        try withStatement(sql, parameters, cached: true) { statement throws(StoreError) in
            while try statement.step() {}
            // Read under the same lock hold, so another thread's write cannot intervene.
            return Int(sqlite3_changes64(statement.connection))
        }
    }

    /// Runs one statement and returns all of its rows.
    public func query(_ sql: String, _ parameters: [SQLValue] = []) throws(StoreError) -> [Row] {
        try query(sql, parameters, cached: true)
    }

    /// Prepares (or reuses) `sql`, binds `parameters` and hands the statement to `body`
    /// under the lock. `cached: false` is for one-off SQL such as migrations.
    func withStatement<T>(_ sql: String, _ parameters: [SQLValue], cached: Bool,
                          _ body: (Statement) throws(StoreError) -> T) throws(StoreError) -> T {
        try lock.withLock { () throws(StoreError) -> T in
            guard let connection else {
                throw .sqlite(code: SQLITE_MISUSE, message: "database \(path) is closed")
            }
            let statement = cached
                ? try cache.statement(for: sql, on: connection)
                : try StatementCache.prepare(sql, on: connection)
            defer {
                if cached { statement.reset(bound: parameters) } else { sqlite3_finalize(statement.pointer) }
            }
            try statement.bind(parameters)
            return try body(statement)
        }
    }

    /// Whether the connection is inside an open SQL transaction (SQLite may have rolled one
    /// back on its own after some errors, e.g. SQLITE_FULL).
    var isInsideSQLTransaction: Bool {
        lock.withLock { connection.map { sqlite3_get_autocommit($0) == 0 } ?? false }
    }

    private func configure(walLimits: WALCheckpointer.Limits) throws(StoreError) {
        // First, so the journal-mode switch below waits for another process instead of failing.
        try execute("PRAGMA busy_timeout = 5000", [], cached: false)
        // Only a new file takes it (an existing one keeps its size). Rows here are small, and
        // in WAL mode every commit writes each page it touched: issuing a PID touches about a
        // dozen, so 1 KiB pages write a quarter of the bytes 4 KiB pages do (the PID Provider's
        // I/O wait and credentials/s before and after: docs/performance.md).
        try execute("PRAGMA page_size = 1024", [], cached: false)
        let mode = try query("PRAGMA journal_mode = WAL", [], cached: false).first?.text("journal_mode")
        // In-memory databases cannot use WAL and report "memory", nor can the private
        // temporary database that "" opens; neither outlives the process, so neither needs it.
        // A real file that silently stays in another mode would lose the crash-safety this
        // store promises, so refuse it.
        guard mode == "wal" || mode == "memory" || path.isEmpty else {
            throw .cannotOpen("journal_mode stayed \(mode ?? "unknown") instead of wal")
        }
        try execute(durability == .powerCut ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL", [], cached: false)
        // SQLite's default page cache (2 MiB) on purpose: a larger one saves the issuers' preads
        // but each transaction then walks its whole hash table, which costs more than it saves
        // once the cache has filled, so issuance slows as the file grows (measured: see
        // docs/performance.md).
        try execute("PRAGMA foreign_keys = ON", [], cached: false)
        if durability == .processCrash, mode == "wal", let connection {
            let lock = self.lock
            let checkpointer = WALCheckpointer(path: path, limits: walLimits) { body in lock.withLock(body) }
            checkpointer.attach(to: connection)
            self.checkpointer = checkpointer
        }
    }
}

extension Database {
    /// `cached: false` skips the statement cache, for SQL that runs once (pragmas, migrations).
    func execute(_ sql: String, _ parameters: [SQLValue], cached: Bool) throws(StoreError) {
        try withStatement(sql, parameters, cached: cached) { statement throws(StoreError) in
            while try statement.step() {}
        }
    }

    /// `cached: false` skips the statement cache, for SQL that runs once.
    func query(_ sql: String, _ parameters: [SQLValue], cached: Bool) throws(StoreError) -> [Row] {
        try withStatement(sql, parameters, cached: cached) { statement throws(StoreError) in
            var rows: [Row] = []
            // Read after the first step: a statement that a schema change made stale is
            // re-prepared by sqlite3_step, and only then reports its new columns.
            var layout: Statement.ColumnLayout?
            while try statement.step() {
                let columns = layout ?? (cached ? cache.layout(of: statement) : statement.columnLayout())
                layout = columns
                rows.append(statement.row(names: columns.names, positions: columns.positions))
            }
            return rows
        }
    }
}

extension StoreError {
    /// The message alone, for wrapping into `cannotOpen`.
    var summary: String {
        switch self {
        case .cannotOpen(let message), .sqlite(_, let message), .constraint(let message): message
        case .notFound: "not found"
        }
    }
}
