/// One row of `status_lists`: a Token Status List an issuer opened. Its entries live in
/// `issued_credentials` (status_list = its `id`, status_index, status).
public struct StatusListRecord: Sendable, Equatable {
    public var uri: String
    public var issuer: String
    public var bits: Int
    public var size: Int
    public var createdAt: Int64

    public init(uri: String, issuer: String, bits: Int, size: Int, createdAt: Int64) {
        self.uri = uri
        self.issuer = issuer
        self.bits = bits
        self.size = size
        self.createdAt = createdAt
    }
}

/// The status lists (`status_lists`) of each issuer, in the order they were opened.
public struct StatusListRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    public func insert(_ list: StatusListRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO status_lists (uri, issuer, bits, size, created_at) VALUES (?, ?, ?, ?, ?)",
            [.text(list.uri), .text(list.issuer), .integer(Int64(list.bits)), .integer(Int64(list.size)),
             .integer(list.createdAt)])
    }

    /// The list opened last, where new credentials go; nil before the first issuance.
    public func newest(issuer: String) throws(StoreError) -> StatusListRecord? {
        try database.query("SELECT * FROM status_lists WHERE issuer = ? ORDER BY rowid DESC LIMIT 1", [.text(issuer)])
            .first.map(Self.record)
    }

    /// How many lists the issuer has opened (the next one's number is this plus one).
    public func count(issuer: String) throws(StoreError) -> Int {
        Int(try database.query("SELECT COUNT(*) AS n FROM status_lists WHERE issuer = ?", [.text(issuer)]).first?.int("n") ?? 0)
    }

    public func find(uri: String, issuer: String) throws(StoreError) -> StatusListRecord? {
        try database.query("SELECT * FROM status_lists WHERE uri = ? AND issuer = ?", [.text(uri), .text(issuer)])
            .first.map(Self.record)
    }

    static func record(_ row: Row) -> StatusListRecord {
        StatusListRecord(uri: row.text("uri") ?? "", issuer: row.text("issuer") ?? "", bits: Int(row.int("bits") ?? 2),
                         size: Int(row.int("size") ?? 0), createdAt: row.int("created_at") ?? 0)
    }
}
