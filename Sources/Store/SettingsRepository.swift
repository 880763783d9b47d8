/// Small named values that must survive restarts, such as change counters.
public struct SettingsRepository: Sendable {
    private let database: Database

    public init(database: Database) {
        self.database = database
    }

    public func get(_ key: String) throws(StoreError) -> String? {
        try database.query("SELECT value FROM settings WHERE key = ?", [.text(key)]).first?.text("value")
    }

    public func set(_ key: String, _ value: String) throws(StoreError) {
        try database.execute("""
            INSERT INTO settings (key, value) VALUES (?, ?)
            ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, [.text(key), .text(value)])
    }

    /// Adds one to the integer stored under `key` (absent counts as 0) and returns the new
    /// value, atomically across threads. A non-integer value throws `.constraint` rather than
    /// silently restarting the counter.
    public func increment(_ key: String) throws(StoreError) -> Int64 {
        try database.atomically { _ throws(StoreError) in
            var current: Int64 = 0
            if let stored = try get(key) {
                guard let number = Int64(stored) else {
                    throw .constraint("setting \(key) is not an integer")
                }
                current = number
            }
            let (next, overflow) = current.addingReportingOverflow(1)
            guard !overflow else { throw .constraint("setting \(key) would overflow") }
            try set(key, String(next))
            return next
        }
    }
}
