import Foundation
import Support
import Cryptography
import Federation
import JOSE
import JSON
import Store

/// Entity keys: private keys as PEM files in `Keys/<name>/` (see `KeyFiles`) and every key's
/// public history in the database.
///
/// Lazy: creating a manager does no I/O. An entity's key is read (or generated, on first start)
/// the first time something signs for it or publishes its keys, exactly once even when many
/// requests arrive together, and its history is read from the database at that moment and kept,
/// so serving `jwks` costs no query. 100,000 entities therefore start at once, and an entity
/// nobody asks for never costs a key.
public final class KeyManager: KeyProvider, @unchecked Sendable {
    /// What an entity needs from its file: its key name and algorithm. A view of the hosted
    /// entity, whose one shared box the table holds: a table of references takes less memory
    /// at 100,000 entities than one of copied fields (name, algorithm, lifetime) (measured: see
    /// docs/performance.md).
    private struct Entity {
        let hosted: HostedEntity
        var name: String { hosted.name }
        var algorithm: SignatureAlgorithm { hosted.signingAlgorithm }
        var lifetime: Int64 { hosted.lifetime }
    }

    /// One entity's loaded keys; immutable once loaded.
    private struct Loaded {
        let signing: SigningKey
        let activeJWK: JWK
        let records: [KeyRecord]
    }

    /// The once-guard of one entity: the first caller loads under the exclusive lock, later
    /// callers (and callers that waited) find the value.
    private final class Slot: Sendable {
        let algorithm: SignatureAlgorithm
        let state = Locked<Loaded?>(nil)
        init(algorithm: SignatureAlgorithm) { self.algorithm = algorithm }
    }

    private let directory: String
    private let byID: [String: Entity]
    private let history: KeyHistoryRepository
    private let clock: Clock
    /// Entity name → slot, created on first use.
    private let slots: Locked<[String: Slot]>
    /// "name/kid" → parsed key, shared with managers that reuse this one: a PEM never changes
    /// (never overwritten), so a key once parsed is never parsed again.
    private let parsed: Locked<[String: SigningKey]>
    /// Names of the entities that sign for others (Trust Anchors, superiors, trust mark issuers):
    /// their keys survive when the tables of loaded keys start over (see `maxLoadedKeys`).
    private let pinned: Set<String>
    private let loadedKeyLimit: Int

    /// No I/O happens here. With `reusing`, entities whose name and `signing_alg` are unchanged
    /// keep the keys and history the previous manager loaded (call `invalidate()` on it first
    /// when keys or the history changed underneath, e.g. after the CLI bumped the change counter).
    /// `loadedKeyLimit`: how many keys stay loaded before the tables start over (`maxLoadedKeys`).
    public init(directory: String, entities: [HostedEntity], database: Database, clock: Clock, reusing previous: KeyManager? = nil,
                loadedKeyLimit: Int = KeyManager.maxLoadedKeys) {
        self.loadedKeyLimit = max(2, loadedKeyLimit)
        self.directory = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        history = KeyHistoryRepository(database: database)
        self.clock = clock
        var byID: [String: Entity] = [:]
        byID.reserveCapacity(entities.count)
        for e in entities { byID[e.entityID] = Entity(hosted: e) }
        self.byID = byID
        pinned = Self.signersForOthers(entities, byID: byID)
        var kept: [String: Slot] = [:]
        if let previous, previous.directory == self.directory {
            let wanted = Dictionary(entities.map { ($0.name, $0.signingAlgorithm) }, uniquingKeysWith: { a, _ in a })
            kept = previous.slots.current.filter { wanted[$0.key] == $0.value.algorithm }
        }
        slots = Locked(kept)
        parsed = previous?.parsed ?? Locked([:])
    }

    /// Forgets every loaded key pointer and history (parsed private keys stay cached), so the next
    /// use reads `active` and the database again: for `keys rotate`/`keys revoke` from the CLI.
    public func invalidate() {
        slots.withLock { $0 = [:] }
    }

    /// `invalidate()` for some entities only (by name), e.g. when `Keys/<name>` appeared or went.
    public func invalidate<Names: Sequence<String>>(entities names: Names) {
        slots.withLock { map in for n in names { map[n] = nil } }
    }

    public func signingKey(for entityID: String) throws(FederationError) -> SigningKey {
        try loaded(entityID).signing
    }

    /// The active key, plus retired keys until their `exp` so statements signed just before a
    /// rotation still verify while they are cached elsewhere. A revoked key is never published.
    ///
    /// An entity whose private key is not loaded is answered from the key history alone: a
    /// superior's statements about 100,000 subordinates need their public keys, and holding
    /// 100,000 private keys for that cost hundreds of MiB.
    public func publicKeys(for entityID: String) throws(FederationError) -> JWKSet {
        guard let e = byID[entityID] else { throw .serverError("no key for \(entityID)") }
        if let k = slots.read({ $0[e.name] })?.state.read({ $0 }) {
            return published(active: k.activeJWK, activeKid: k.signing.kid, records: k.records)
        }
        let records = (try? history.keys(entity: e.name)) ?? []
        let candidates = records.filter { $0.retiredAt == nil && $0.revokedAt == nil }
        if let active = candidates.max(by: { $0.createdAt < $1.createdAt }), candidates.count == 1,
           let jwk = Self.jwk(active), jwk.algorithm == e.algorithm.rawValue {
            return published(active: jwk, activeKid: active.kid, records: records)
        }
        // No key yet, a changed algorithm or an unclear history: load (or make) the key.
        let k = try loaded(entityID)
        return published(active: k.activeJWK, activeKid: k.signing.kid, records: k.records)
    }

    private func published(active: JWK, activeKid: String, records: [KeyRecord]) -> JWKSet {
        let now = clock.now()
        var keys = [active]
        for r in records where r.kid != activeKid && r.revokedAt == nil {
            if let exp = r.expiresAt, exp > now, let jwk = Self.jwk(r) { keys.append(jwk) }
        }
        return JWKSet(keys: keys)
    }

    /// Creates, in the background at first start, the keys of every entity that has none yet, so
    /// that later requests never wait for a key to be made and written.
    /// Keys are written without an fsync per file; each batch is made durable by one sync(2) and
    /// then recorded in the history, so what a kill -9 can lose is only unrecorded files, which
    /// the next start adopts. Returns how many keys it made; `stop` ends it early.
    public func generateMissing(batch: Int = 512, stop: @Sendable () -> Bool) -> Int {
        let entities = byID.values.sorted { $0.name < $1.name }
        var made = 0
        var start = 0
        while start < entities.count, !stop() {
            let chunk = Array(entities[start..<min(start + batch, entities.count)])
            start += batch
            let directory = self.directory
            let keys = EntityDirectory.parallelMap(chunk.count) { i -> (String, SigningKey)? in
                // Checked per key too, so that a stop (the server shutting down) does not wait
                // for the rest of a batch; the keys already made are still recorded below.
                guard !stop() else { return nil }
                let e = chunk[i]
                guard let key = try? KeyFiles(root: directory, name: e.name).createIfMissing(algorithm: e.algorithm) else { return nil }
                return (e.name, key)
            }.compactMap { $0 }
            guard !keys.isEmpty else { continue }
            sync()
            let now = clock.now()
            try? history.database.transaction { _ in
                for (name, key) in keys {
                    try history.recordActive(entity: name, kid: key.kid, jwk: Self.publicJWK(key).jsonValue.serialized(), createdAt: now)
                }
            }
            made += keys.count
        }
        return made
    }

    /// Retired and revoked keys in the form of OpenID Federation 1.0 §8.7.2: `iat`, the required
    /// `exp`, and for a revoked key `revoked: {revoked_at, reason?}`. The reason is left out when
    /// none was given (§8.7.3 allows omitting it instead of sending `unspecified`).
    public func historicalKeys(for entityID: String) throws(FederationError) -> [JWK] {
        let k = try loaded(entityID)
        return k.records.filter { $0.kid != k.signing.kid && ($0.retiredAt != nil || $0.revokedAt != nil) }.compactMap { r in
            guard let jwk = Self.jwk(r) else { return nil }
            var extra: [String: JSONValue] = ["iat": .int(r.createdAt), "exp": .int(r.expiresAt ?? r.revokedAt ?? r.retiredAt ?? r.createdAt)]
            if let at = r.revokedAt {
                var revoked: [String: JSONValue] = ["revoked_at": .int(at)]
                if let reason = r.revocationReason { revoked["reason"] = .string(reason) }
                extra["revoked"] = .object(revoked)
            }
            return jwk.adding(extra)
        }
    }

    private static func jwk(_ r: KeyRecord) -> JWK? {
        guard let json = try? JSONValue.parse(r.jwk), let o = json.objectValue else { return nil }
        return try? JWK(json: o)
    }

    // MARK: Loading on first use

    private func loaded(_ entityID: String) throws(FederationError) -> Loaded {
        guard let e = byID[entityID] else { throw .serverError("no key for \(entityID)") }
        let slot = self.slot(e)
        if let done = slot.state.read({ $0 }) { return done }
        return try slot.state.withLock { (state: inout Loaded?) throws(FederationError) -> Loaded in
            if let done = state { return done }
            do {
                let l = try load(e)
                state = l
                return l
            } catch {
                // Not remembered: the next request tries again (a full disk may have been freed).
                throw .serverError("cannot load the key of \(e.name): \(error)")
            }
        }
    }

    private func slot(_ e: Entity) -> Slot {
        if let s = slots.read({ $0[e.name] }), s.algorithm == e.algorithm { return s }
        // The table that started over is handed out of the lock and freed there.
        let (slot, _) = slots.withLock { map -> (Slot, [String: Slot]) in
            if let s = map[e.name], s.algorithm == e.algorithm { return (s, [:]) }
            let dropped = map.count >= loadedKeyLimit ? startOver(&map) { Substring($0) } : [:]
            let s = Slot(algorithm: e.algorithm)
            map[e.name] = s
            return (s, dropped)
        }
        return slot
    }

    private func load(_ e: Entity) throws -> Loaded {
        let files = KeyFiles(root: directory, name: e.name)
        let cached = { (kid: String) in self.parsed.read { $0["\(e.name)/\(kid)"] } }
        var signing = try files.loadOrCreate(algorithm: e.algorithm, parsed: cached)
        remember(signing, of: e.name)
        var records = try history.keys(entity: e.name)
        let now = clock.now()
        // A changed `signing_alg` means a new key of the right type; the old one becomes historical.
        if !signing.privateKey.fits(e.algorithm) {
            let old = signing
            signing = try files.create(algorithm: e.algorithm)
            remember(signing, of: e.name)
            try record(old, of: e.name, in: records, at: now)
            try history.retire(entity: e.name, kid: old.kid, at: now, expiresAt: now + e.lifetime)
            records = try history.keys(entity: e.name)
        }
        if try record(signing, of: e.name, in: records, at: now) { records = try history.keys(entity: e.name) }
        return Loaded(signing: signing, activeJWK: Self.publicJWK(signing), records: records)
    }

    /// Adds the key to the history unless it is there; true if it was added.
    @discardableResult
    private func record(_ key: SigningKey, of name: String, in records: [KeyRecord], at now: Int64) throws -> Bool {
        guard !records.contains(where: { $0.kid == key.kid }) else { return false }
        try history.recordActive(entity: name, kid: key.kid, jwk: Self.publicJWK(key).jsonValue.serialized(), createdAt: now)
        return true
    }

    private func remember(_ key: SigningKey, of name: String) {
        _ = parsed.withLock { map -> [String: SigningKey] in
            let dropped = map.count >= loadedKeyLimit ? startOver(&map) { $0.prefix { $0 != "/" } } : [:]
            map["\(name)/\(key.kid)"] = key
            return dropped
        }
    }

    /// Empties a full table of loaded keys but for those of `pinned` entities (`name` gives a
    /// key's entity name), unless they alone fill half of it. Without the exception every
    /// superior's key is read again after each 1,024 leaves (measured: see docs/performance.md).
    /// Returns the table as it was, for the caller to let go of after unlocking: freeing 1,024
    /// OpenSSL keys takes long, and every other request needing a key would otherwise wait for
    /// it.
    private func startOver<Value>(_ map: inout [String: Value], name: (String) -> Substring) -> [String: Value] {
        let old = map
        map = map.filter { pinned.contains(String(name($0.key))) }
        if map.count >= loadedKeyLimit / 2 { map = [:] }
        return old
    }

    /// Entities other entities name as their superior, Trust Anchors, and entities declaring
    /// subordinates or issuing trust marks.
    private static func signersForOthers(_ entities: [HostedEntity], byID: [String: Entity]) -> Set<String> {
        var out: Set<String> = []
        for e in entities {
            if e.isTrustAnchor || !e.subordinates.isEmpty || e.issuesTrustMarks { out.insert(e.name) }
            for hint in e.authorityHints { if let superior = byID[hint] { out.insert(superior.name) } }
        }
        return out
    }

    /// Private keys kept parsed at once. A parsed key (the OpenSSL private and public key, each
    /// with its own curve group, the JWK and the history) takes kilobytes, so a table that grew
    /// with the entities would be a large share of a 100,000-leaf server's memory (measured:
    /// see docs/performance.md). Few keys sign often: superiors sign statements about their
    /// subordinates, while a leaf signs its own configuration once per lifetime (the
    /// signed-statement cache keeps it), so a leaf's key is rarely wanted twice. Past this many
    /// the cache starts over and a key is read from its PEM again.
    public static let maxLoadedKeys = 1024

    static func publicJWK(_ key: SigningKey) -> JWK {
        if let jwk = key.publicJWK, jwk.algorithm == key.algorithm.rawValue { return jwk }
        return JWK(components: key.privateKey.publicComponents, algorithm: key.algorithm)
    }
}
