import Support
import Cryptography
import Federation
import Foundation
import JOSE
import JSON
import Store

/// Entity keys: private keys as PEM files in `Keys/<name>/<kid>.pem` (mode 0600, created once,
/// never overwritten) with `Keys/<name>/active` naming the signing key, and every key's public
/// history in the database. A snapshot: `keys rotate` writes new files and the server reloads.
public final class KeyManager: KeyProvider, @unchecked Sendable {
    private struct EntityKeys {
        let name: String
        let signing: SigningKey
        let activeJWK: JWK
    }

    private let byID: [String: EntityKeys]
    private let history: KeyHistoryRepository
    private let clock: Clock

    /// Loads every entity's active key, generating one on first start.
    public init(directory: String, entities: [HostedEntity], database: Database, clock: Clock) throws {
        history = KeyHistoryRepository(database: database)
        self.clock = clock
        var map: [String: EntityKeys] = [:]
        try KeyFiles.ensureDirectory(directory)
        for e in entities {
            let files = KeyFiles(root: directory, name: e.name)
            let key = try files.loadActive() ?? files.create(algorithm: e.signingAlgorithm)
            var signing = key
            // A changed `signing_alg` means a new key of the right type; the old one becomes historical.
            if !key.privateKey.publicKey.fits(e.signingAlgorithm) {
                signing = try files.create(algorithm: e.signingAlgorithm)
                try history.retire(entity: e.name, kid: key.kid, at: clock.now(), expiresAt: clock.now() + e.lifetime)
            }
            let jwk = JWK(publicKey: signing.privateKey.publicKey, algorithm: signing.algorithm)
            try history.recordActive(entity: e.name, kid: signing.kid, jwk: jwk.jsonValue.serialized(), createdAt: clock.now())
            map[e.entityID] = EntityKeys(name: e.name, signing: signing, activeJWK: jwk)
        }
        byID = map
    }

    public func signingKey(for entityID: String) throws(FederationError) -> SigningKey {
        guard let k = byID[entityID] else { throw .serverError("no key for \(entityID)") }
        return k.signing
    }

    /// The active key, plus retired keys until their `exp` so statements signed just before a
    /// rotation still verify while they are cached elsewhere.
    public func publicKeys(for entityID: String) throws(FederationError) -> JWKSet {
        guard let k = byID[entityID] else { throw .serverError("no key for \(entityID)") }
        let now = clock.now()
        var keys = [k.activeJWK]
        for r in records(k.name) where r.kid != k.signing.kid && r.revokedAt == nil {
            if let exp = r.expiresAt, exp > now, let jwk = Self.jwk(r) { keys.append(jwk) }
        }
        return JWKSet(keys: keys)
    }

    public func historicalKeys(for entityID: String) throws(FederationError) -> [JWK] {
        guard let k = byID[entityID] else { throw .serverError("no key for \(entityID)") }
        return records(k.name).filter { $0.kid != k.signing.kid && ($0.retiredAt != nil || $0.revokedAt != nil) }.compactMap { r in
            guard let jwk = Self.jwk(r) else { return nil }
            var extra: [String: JSONValue] = ["iat": .int(r.createdAt), "exp": .int(r.expiresAt ?? r.revokedAt ?? r.retiredAt ?? r.createdAt)]
            if let at = r.revokedAt {
                extra["revoked"] = ["revoked_at": .int(at), "reason": .string(r.revocationReason ?? "unspecified")]
            }
            return jwk.adding(extra)
        }
    }

    private func records(_ name: String) -> [KeyRecord] { (try? history.keys(entity: name)) ?? [] }

    private static func jwk(_ r: KeyRecord) -> JWK? {
        guard let json = try? JSONValue.parse(r.jwk), let o = json.objectValue else { return nil }
        return try? JWK(json: o)
    }

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
                let oldJWK = JWK(publicKey: old.privateKey.publicKey, algorithm: old.algorithm)
                try h.recordActive(entity: name, kid: old.kid, jwk: oldJWK.jsonValue.serialized(), createdAt: now)
                try h.retire(entity: name, kid: old.kid, at: now, expiresAt: now + lifetime)
            }
            let jwk = JWK(publicKey: new.privateKey.publicKey, algorithm: new.algorithm)
            try h.recordActive(entity: name, kid: new.kid, jwk: jwk.jsonValue.serialized(), createdAt: now)
        }
        return (old?.kid, new.kid)
    }
}

/// The PEM files of one entity.
struct KeyFiles {
    let root: String
    let name: String
    var directory: String { (root as NSString).appendingPathComponent(name) }
    var activePointer: String { (directory as NSString).appendingPathComponent("active") }

    static func ensureDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// The key named by `active` (or, if that file is missing, the newest PEM).
    func loadActive() throws -> SigningKey? {
        let fm = FileManager.default
        guard fm.fileExists(atPath: directory) else { return nil }
        var kid = (try? String(contentsOfFile: activePointer, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        if kid == nil || kid!.isEmpty {
            let pems = try fm.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".pem") }
            kid = try pems.max { a, b in try modified(a) < modified(b) }.map { String($0.dropLast(4)) }
        }
        guard let kid, !kid.isEmpty else { return nil }
        let path = (directory as NSString).appendingPathComponent(kid + ".pem")
        let pem = try String(contentsOfFile: path, encoding: .utf8)
        let key = try PrivateKey(pem: pem)
        guard let alg = EntityFile.signingAlgorithms.first(where: key.publicKey.fits) else {
            throw EntityFileError(file: path, field: nil, "holds a key of a type no signing algorithm fits")
        }
        let actualKid = JWK(publicKey: key.publicKey).thumbprint()
        return SigningKey(privateKey: key, algorithm: alg, kid: actualKid)
    }

    private func modified(_ file: String) throws -> Date {
        let attrs = try FileManager.default.attributesOfItem(atPath: (directory as NSString).appendingPathComponent(file))
        return attrs[.modificationDate] as? Date ?? .distantPast
    }

    /// Generates a key, writes it with O_EXCL (never overwriting) and mode 0600, then points `active` at it.
    func create(algorithm: SignatureAlgorithm) throws -> SigningKey {
        try Self.ensureDirectory(directory)
        let key = try PrivateKey(generatingFor: algorithm)
        let kid = JWK(publicKey: key.publicKey).thumbprint()
        let path = (directory as NSString).appendingPathComponent(kid + ".pem")
        try Self.writeExclusive(path, try key.pemPKCS8())
        let tmp = activePointer + ".tmp"
        try? FileManager.default.removeItem(atPath: tmp)
        try Self.writeExclusive(tmp, kid + "\n")
        guard rename(tmp, activePointer) == 0 else { throw CocoaError(.fileWriteUnknown) }
        return SigningKey(privateKey: key, algorithm: algorithm, kid: kid)
    }

    static func writeExclusive(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: path]) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
            written += n
        }
        guard fsync(fd) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
    }
}
