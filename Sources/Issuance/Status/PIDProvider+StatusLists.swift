import Cryptography
import JSON
import Store
import StatusList
import Support

/// A credential's state in the Token Status List (§7.1): two bits per entry, so that
/// `suspended` (0x02) can be expressed beside `valid` and `invalid` (issue 7 item 10).
public enum CredentialStatus: String, Sendable, CaseIterable {
    case valid, invalid, suspended

    public var value: Int {
        switch self {
        case .valid: 0
        case .invalid: 1
        case .suspended: 2
        }
    }

    public init?(value: Int) {
        guard let status = Self.allCases.first(where: { $0.value == value }) else { return nil }
        self = status
    }
}

extension PIDProvider {
    /// Bits per status (Token Status List §4.1): 2, for `suspended`.
    static let statusListBits = 2
    /// Entries per list. A new list opens once the newest is half full, so a random free index
    /// is found in about two draws at worst, and a verifier fetching the list learns little
    /// (Token Status List §12.5: herd privacy needs lists much larger than their use).
    static let statusListSize = 1 << 16
    /// Lifetime (`exp` − `iat`) and `ttl` of a served Status List Token. A short `ttl` keeps a
    /// revocation visible to relying parties that honour it within a minute.
    static let statusListTokenLifetime: Int64 = 86_400
    static let statusListTimeToLive: Int64 = 60

    /// Picks `count` distinct random free entries (Token Status List §12.5: sequential indexes
    /// would let verifiers correlate holders by issuance order). Must run inside a database
    /// transaction: the caller inserts the records that take the entries before it commits, so
    /// no two requests can pick the same entry, and (status_uri, status_index) is UNIQUE anyway.
    func allocateStatusEntries(_ count: Int, in database: Database, now: Int64) throws -> [StatusReference] {
        let lists = StatusListRepository(database: database)
        let records = IssuedCredentialRepository(database: database)
        var list = try lists.newest(issuer: issuer) ?? openStatusList(lists, now: now)
        var chosen: [StatusReference] = []
        var taken = Set<Int>()
        while chosen.count < count {
            var collisions = 0
            while true {
                let index = try StatusList.allocateIndex(size: list.size, used: [])
                if !taken.contains(index), try !records.isTaken(statusURI: list.uri, index: index) {
                    taken.insert(index)
                    chosen.append(StatusReference(index: index, uri: list.uri))
                    break
                }
                collisions += 1
                // Counting a list costs a scan of its index, so it runs only once draws start to
                // collide; past half full (or after many misses) the next list opens.
                if collisions >= 2, try collisions >= 64 || takenEntries(of: list.uri, records) + taken.count >= list.size / 2 {
                    list = try openStatusList(lists, now: now)
                    taken = []
                    collisions = 0
                }
            }
        }
        statusFill.withLock { fill in
            guard let known = fill else { return }
            fill = (known.uri, known.taken + chosen.count { $0.uri == known.uri })
        }
        return chosen
    }

    /// Entries taken in the list at `uri`: counted once (a scan of its index: milliseconds once
    /// it holds tens of thousands) and then kept up by `allocateStatusEntries`. Counting at every
    /// double collision instead made issuance slow down as the list filled (mdoc flows went from
    /// 1,877/s to 664/s over the first 30,000 credentials, SQLite 59% of the server's CPU). A
    /// transaction that rolls back after allocating leaves the figure a little high, so at worst
    /// the next list opens a little before this one is half full.
    private func takenEntries(of uri: String, _ records: IssuedCredentialRepository) throws(StoreError) -> Int {
        if let known = statusFill.read({ $0?.uri == uri ? $0?.taken : nil }) { return known }
        let counted = try records.count(statusURI: uri)
        statusFill.withLock { $0 = (uri, counted) }
        return counted
    }

    private func openStatusList(_ lists: StatusListRepository, now: Int64) throws(StoreError) -> StatusListRecord {
        let record = StatusListRecord(uri: urls.statusList(try lists.count(issuer: issuer) + 1), issuer: issuer,
                                      bits: Self.statusListBits, size: Self.statusListSize, createdAt: now)
        try lists.insert(record)
        return record
    }

    /// The Status List Token served at `urls.statusList(number)` (Token Status List §5.1),
    /// built from the database at every call so a status change shows at once: header
    /// `typ: statuslist+jwt` and `x5c` = [document signer] (the key that signs the
    /// credentials, under the IACA); claims `sub` = the list's own URI, `iat`, `exp`, `ttl`,
    /// `status_list {bits, lst}`. nil for a list that does not exist.
    public func statusListToken(number: Int) throws(IssuanceError) -> String? {
        guard number > 0 else { return nil }
        let uri = urls.statusList(number)
        let now = clock.now()
        let list: StatusList
        do {
            guard let record = try StatusListRepository(database: database).find(uri: uri, issuer: issuer) else { return nil }
            var built = try StatusList(bits: record.bits, size: record.size)
            for (index, status) in try IssuedCredentialRepository(database: database).nonValidStatuses(statusURI: uri) {
                try built.setStatus(StatusType(rawValue: UInt8(truncatingIfNeeded: status)), at: index)
            }
            list = built
        } catch {
            logger.error("status list \(number) cannot be built: \(error)")
            throw .serverError("the status list cannot be built")
        }
        let token = StatusListToken(subject: uri, issuedAt: now, expiresAt: now + Self.statusListTokenLifetime,
                                    timeToLive: Self.statusListTimeToLive, list: list)
        do {
            return try token.sign(key: keys.credentialSignerKey, algorithm: .ES256, keyID: nil,
                                  x5c: keys.x5c)
        } catch {
            throw .serverError("cannot sign the status list: \(error)")
        }
    }
}
