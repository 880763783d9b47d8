import Cryptography
import Federation
import Foundation
import JOSE
import Support

/// The PEM files of one entity: `Keys/<name>/<kid>.pem` (PKCS#8, mode 0600, written once with
/// O_EXCL and never overwritten) and `Keys/<name>/active`, the kid of the signing key, replaced
/// only by rename so a reader sees the old or the new pointer, never half of one.
struct KeyFiles {
    let root: String
    let name: String
    var directory: String { root + "/" + name }
    var activePointer: String { directory + "/active" }
    /// How the folder and its files are made (0700, 0600, O_EXCL, synced entries).
    var folder: KeyFolder { KeyFolder(directory) }

    /// The kid `active` names, or nil when there is no pointer (yet). Read with plain POSIX
    /// calls: this runs on every key load, which a cold resolve in a large federation needs.
    func activeKid() -> String? {
        guard let bytes = EntityDirectory.readFile(activePointer)?.0 else { return nil }
        let isText = { (b: UInt8) in b != UInt8(ascii: " ") && b != UInt8(ascii: "\n") && b != UInt8(ascii: "\r") && b != UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: isText), let last = bytes.lastIndex(where: isText) else { return nil }
        return String(decoding: bytes[first ... last], as: UTF8.self)
    }

    /// The key named by `active` (or, if that file is missing, the newest PEM): what the CLI
    /// rotates away from. The server uses `loadOrCreate`, which also publishes the pointer.
    func loadActive(parsed: (String) -> SigningKey? = { _ in nil }) throws -> SigningKey? {
        if let kid = activeKid() { return try parsed(kid) ?? load(kid: kid) }
        guard let kid = try newestPEM() else { return nil }
        return try parsed(kid) ?? load(kid: kid)
    }

    /// The signing key, made on first use. With no `active` pointer, the newest readable PEM (a
    /// directory from before pointers) or else a fresh key becomes active, and the pointer is
    /// published with link(2), which fails when `active` exists: of processes starting together
    /// exactly one wins, the others adopt its key and delete their own unused PEM.
    func loadOrCreate(algorithm: SignatureAlgorithm, parsed: (String) -> SigningKey? = { _ in nil }) throws -> SigningKey {
        if let kid = activeKid() { return try parsed(kid) ?? load(kid: kid) }
        var candidate: SigningKey
        var fresh = false
        // A PEM another starter is still writing fails to parse; then make our own.
        if let kid = try newestPEM(), let key = try? load(kid: kid) {
            candidate = key
        } else {
            candidate = try writeKey(algorithm: algorithm)
            fresh = true
        }
        if try publish(candidate.kid) { return candidate }
        guard let winner = activeKid() else { throw Self.failure("\(activePointer) vanished") }
        if fresh && winner != candidate.kid { unlink(directory + "/" + candidate.kid + ".pem") }
        return try parsed(winner) ?? load(kid: winner)
    }

    private func newestPEM() throws -> String? {
        let fm = FileManager.default
        guard fm.fileExists(atPath: directory) else { return nil }
        let pems = try fm.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".pem") }
        return try pems.max { a, b in try modified(a) < modified(b) }.map { String($0.dropLast(4)) }
    }

    /// First-start generation in bulk: a fresh active key for a directory that has none, or nil
    /// when it has one (or another writer won). Nothing is fsynced: the caller makes a whole batch
    /// durable with one sync(2) before recording it, instead of three fsyncs per key.
    func createIfMissing(algorithm: SignatureAlgorithm) throws -> SigningKey? {
        guard activeKid() == nil, try newestPEM() == nil else { return nil }
        let key = try writeKey(algorithm: algorithm, durable: false)
        if try publish(key.kid, durable: false) { return key }
        unlink(directory + "/" + key.kid + ".pem")
        return nil
    }

    /// Points `active` at `kid` unless it exists; false if another writer got there first.
    private func publish(_ kid: String, durable: Bool = true) throws -> Bool {
        try folder.ensure()
        let tmp = try writePointer(kid, durable: durable)
        defer { unlink(tmp) }
        if link(tmp, activePointer) == 0 {
            if durable { folder.sync() }
            return true
        }
        guard errno == EEXIST else { throw Self.failure("cannot publish \(activePointer)") }
        return false
    }

    /// The key in `<kid>.pem`; its kid is recomputed (RFC 7638 thumbprint), not taken from the name.
    func load(kid: String) throws -> SigningKey {
        let path = directory + "/" + kid + ".pem"
        guard let bytes = EntityDirectory.readFile(path)?.0 else {
            throw CocoaError(errno == ENOENT ? .fileReadNoSuchFile : .fileReadUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        let key = try PrivateKey(pem: String(decoding: bytes, as: UTF8.self))
        guard let alg = EntityFile.signingAlgorithms.first(where: key.fits) else {
            throw EntityFileError(file: path, field: nil, "holds a key of a type no signing algorithm fits")
        }
        return Self.signingKey(key, algorithm: alg)
    }

    /// The kid is the thumbprint of the public JWK, which is built once here and kept with the key.
    static func signingKey(_ key: PrivateKey, algorithm: SignatureAlgorithm) -> SigningKey {
        let jwk = JWK(components: key.publicComponents, algorithm: algorithm)
        return SigningKey(privateKey: key, algorithm: algorithm, kid: jwk.kid ?? jwk.thumbprint(), publicJWK: jwk)
    }

    private func modified(_ file: String) throws -> Date {
        let attrs = try FileManager.default.attributesOfItem(atPath: directory + "/" + file)
        return attrs[.modificationDate] as? Date ?? .distantPast
    }

    /// A new signing key replacing the current one (rotation): the pointer is renamed over `active`.
    func create(algorithm: SignatureAlgorithm) throws -> SigningKey {
        let key = try writeKey(algorithm: algorithm)
        let tmp = try writePointer(key.kid)
        guard rename(tmp, activePointer) == 0 else {
            unlink(tmp)
            throw Self.failure("cannot replace \(activePointer)")
        }
        folder.sync()
        return key
    }

    private func writeKey(algorithm: SignatureAlgorithm, durable: Bool = true) throws -> SigningKey {
        let signing = Self.signingKey(try PrivateKey(generatingFor: algorithm), algorithm: algorithm)
        try folder.create(signing.kid + ".pem", try signing.privateKey.pemPKCS8(), durable: durable)
        return signing
    }

    /// A pointer file under a name no other writer uses, ready to be linked or renamed into place.
    private func writePointer(_ kid: String, durable: Bool = true) throws -> String {
        let tmp = "\(activePointer).\(getpid()).\(UInt32.random(in: 0 ... .max)).tmp"
        try ExclusiveFile.create(tmp, kid + "\n", durable: durable)
        return tmp
    }

    private static func failure(_ message: String) -> Error {
        CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(message): \(String(cString: strerror(errno)))"])
    }
}
