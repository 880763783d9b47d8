import Support
import Cryptography
import Federation
import JOSE
import JSON
import Store

/// Why a key was revoked: the values of OpenID Federation 1.0 §8.7.3 ("inspired by" RFC 5280
/// §5.3.1, but not its names). `keyCompromise`, the RFC 5280 spelling, is accepted for
/// `compromised` because operators type it from habit.
public enum KeyRevocationReason: String, CaseIterable, Sendable {
    case unspecified
    case compromised
    case superseded

    public init?(argument: String) {
        if argument == "keyCompromise" { self = .compromised; return }
        self.init(rawValue: argument)
    }
}

/// A key operation the CLI refuses, with a message for the operator.
public struct KeyOperationError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

extension KeyManager {
    /// `trustbed keys rotate`: a new active key; the old one stays published until `lifetime` has
    /// passed (so its statements expire first) and is listed as historical from now on.
    public static func rotate(name: String, algorithm: SignatureAlgorithm, lifetime: Int64, directory: String,
                              database: Database, clock: Clock) throws -> (old: String?, new: String) {
        let files = KeyFiles(root: directory, name: name)
        let old = try files.loadActive()
        let new = try files.create(algorithm: algorithm)
        let now = clock.now()
        try database.transaction { db in
            let h = KeyHistoryRepository(database: db)
            if let old {
                try h.recordActive(entity: name, kid: old.kid, jwk: publicJWK(old).jsonValue.serialized(), createdAt: now)
                try h.retire(entity: name, kid: old.kid, at: now, expiresAt: now + lifetime)
            }
            try h.recordActive(entity: name, kid: new.kid, jwk: publicJWK(new).jsonValue.serialized(), createdAt: now)
        }
        return (old?.kid, new.kid)
    }

    /// `trustbed keys revoke`: marks a key revoked (time and reason) in the history, so it leaves
    /// the entity's `jwks` at once (also a retired key still published until its `exp`) and
    /// `historical-keys` lists it with `revoked`. Revoking the active key first rotates to a new
    /// one, so the entity can still sign; the new kid is returned then.
    ///
    /// Throws `KeyOperationError` for a kid that is neither in the history nor in `Keys/<name>/`.
    @discardableResult
    public static func revoke(name: String, kid: String, reason: KeyRevocationReason?, algorithm: SignatureAlgorithm,
                              lifetime: Int64, directory: String, database: Database, clock: Clock) throws -> String? {
        let files = KeyFiles(root: directory, name: name)
        let history = KeyHistoryRepository(database: database)
        var known = try history.keys(entity: name).contains { $0.kid == kid }
        let activeKid = files.activeKid() ?? (try? files.loadActive())?.kid
        var onDisk: SigningKey?
        if !known {
            // A key that exists only as a file (the server never needed it yet) is still this entity's key.
            onDisk = try? files.load(kid: kid)
            known = onDisk?.kid == kid
        }
        guard known else { throw KeyOperationError(description: "\(name) has no key \(kid)") }

        var rotatedTo: String?
        if kid == activeKid {
            rotatedTo = try rotate(name: name, algorithm: algorithm, lifetime: lifetime, directory: directory,
                                   database: database, clock: clock).new
        }
        let now = clock.now()
        try database.transaction { db in
            let h = KeyHistoryRepository(database: db)
            if let onDisk { try h.recordActive(entity: name, kid: kid, jwk: publicJWK(onDisk).jsonValue.serialized(), createdAt: now) }
            try h.revoke(entity: name, kid: kid, at: now, reason: reason?.rawValue)
        }
        return rotatedTo
    }
}
