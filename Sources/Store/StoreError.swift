/// Everything the store can fail with. Constraint violations get their own case because
/// callers usually turn them into a client error (duplicate, unknown reference) rather than
/// a server fault.
public enum StoreError: Error, Equatable, Sendable {
    /// The file could not be opened, is not a database, or has a schema newer than this build.
    case cannotOpen(String)
    /// Any other SQLite failure, with its primary result code and message.
    case sqlite(code: Int32, message: String)
    /// A UNIQUE, NOT NULL, CHECK or FOREIGN KEY constraint refused the write.
    case constraint(String)
    /// The record an update targeted does not exist.
    case notFound
}
