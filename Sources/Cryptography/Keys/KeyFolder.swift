import Foundation
import Support

/// A folder of key material under `Keys/` (an entity's signing keys, a service's CA, signer
/// certificates and secrets): the one place that decides how such files are made. The folder
/// is created 0700 and each file 0600 with O_EXCL, never overwritten in place: when two
/// processes start at once the loser reads the winner's file, and a file is only ever replaced
/// by writing it aside and renaming it over the old one, so a reader sees the old or the new
/// content, never half of one.
public struct KeyFolder: Sendable {
    public let path: String

    public init(_ path: String) { self.path = path }

    public func file(_ name: String) -> String { path + "/" + name }

    /// Creates the folder (and missing folders above it) 0700.
    public func ensure() throws { try PrivateDirectory.create(path) }

    /// The file's text, or nil when it does not exist or cannot be read.
    public func read(_ name: String) -> String? { try? String(contentsOfFile: file(name), encoding: .utf8) }

    /// Creates `name` with `text`; throws when it exists. `durable` fsyncs the contents.
    public func create(_ name: String, _ text: String, durable: Bool = true) throws {
        try ensure()
        try ExclusiveFile.create(file(name), text, durable: durable)
    }

    /// The file's text, made by `make` when missing; of two processes making it at once, both
    /// end up with the one that was written first.
    public func text(_ name: String, make: () throws -> String) throws -> String {
        if let existing = read(name) { return existing }
        let fresh = try make()
        if (try? create(name, fresh)) != nil { return fresh }
        return try String(contentsOfFile: file(name), encoding: .utf8)
    }

    public func privateKey(_ name: String, make: () throws -> PrivateKey) throws -> PrivateKey {
        try PrivateKey(pem: text(name) { try make().pemPKCS8() })
    }

    public func certificate(_ name: String, make: () throws -> Certificate) throws -> Certificate {
        try Certificate(pem: text(name) { try make().pem() })
    }

    public func crl(_ name: String, make: () throws -> CertificateRevocationList) throws -> CertificateRevocationList {
        try CertificateRevocationList(pem: text(name) { try make().pem() })
    }

    /// Replaces `name` atomically: written aside under a name no other writer uses, then
    /// renamed over it, and the folder synced so the new entry survives a power cut.
    public func replace(_ name: String, _ text: String) throws {
        let aside = "\(file(name)).\(getpid()).\(UInt32.random(in: 0 ... .max)).new"
        try ExclusiveFile.create(aside, text)
        guard rename(aside, file(name)) == 0 else {
            unlink(aside)
            throw Self.failure("cannot replace \(file(name))")
        }
        sync()
    }

    /// Makes new directory entries (a created or renamed file) survive a power cut, not only
    /// their contents.
    public func sync() {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    static func failure(_ message: String) -> Error {
        CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(message): \(String(cString: strerror(errno)))"])
    }
}
