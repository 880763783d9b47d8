/// The challenges of `<wp>/instructions/challenge` (issue 21), each for one wallet instance and
/// good once until it expires. Spending is a DELETE counted in the transaction that performs
/// the instruction: of concurrent uses exactly one deletes the row, and a refused instruction
/// rolls the DELETE back, so it burns nothing.
public struct InstructionChallengeRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    public func insert(provider: String, challenge: String, instance: String, expiresAt: Int64) throws(StoreError) {
        try database.execute(
            "INSERT INTO wallet_provider_instruction_challenges (provider, challenge, instance, expires_at) VALUES (?, ?, ?, ?)",
            [.text(provider), .text(challenge), .text(instance), .integer(expiresAt)])
    }

    /// Whether the challenge is unspent, unexpired and this instance's (a read, before the checks).
    public func isUsable(provider: String, challenge: String, instance: String, now: Int64) throws(StoreError) -> Bool {
        !(try database.query(
            """
            SELECT 1 AS found FROM wallet_provider_instruction_challenges
            WHERE provider = ? AND challenge = ? AND instance = ? AND expires_at > ?
            """, [.text(provider), .text(challenge), .text(instance), .integer(now)])).isEmpty
    }

    /// Spends it: true for exactly one caller while it is unexpired and this instance's.
    public func consume(provider: String, challenge: String, instance: String, now: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            """
            DELETE FROM wallet_provider_instruction_challenges
            WHERE provider = ? AND challenge = ? AND instance = ? AND expires_at > ?
            """, [.text(provider), .text(challenge), .text(instance), .integer(now)]) == 1
    }

    /// Forgets expired challenges (the purge loop); returns how many.
    @discardableResult
    public func purge(now: Int64) throws(StoreError) -> Int {
        try database.executeCountingChanges("DELETE FROM wallet_provider_instruction_challenges WHERE expires_at <= ?", [.integer(now)])
    }
}
