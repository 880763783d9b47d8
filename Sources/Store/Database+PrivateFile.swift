#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The database holds the issuers' state (token and code hashes, nonces, issued-credential
/// records): only the server's user may read it, whatever the umask of the shell that started it
/// (systemd's unit sets UMask=0077, a shell usually 022, and SQLite creates files 0644).
extension Database {
    /// Creates `path` mode 0600 when it does not exist yet, before SQLite opens it. SQLite gives
    /// the -wal and -shm files the mode of the database file (os_unix.c, findCreateFileMode), so
    /// they are 0600 too. An existing file keeps its mode: an operator may have widened it on
    /// purpose. A missing folder is not created: a mistyped `--database` must not make a tree.
    static func createPrivately(_ path: String) throws(StoreError) {
        // ":memory:" and "" (a private temporary database) are not files.
        guard !path.isEmpty, path != ":memory:" else { return }
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        // Exists already, or cannot be made (missing folder, no permission): SQLite's open then
        // reports it in its own words.
        guard fd >= 0 else { return }
        // The umask may have taken bits off 0600 (e.g. 0277 leaves 0400): set it exactly.
        let changed = fchmod(fd, 0o600)
        closeDescriptor(fd)
        guard changed == 0 else { throw .cannotOpen("\(path): \(String(cString: strerror(errno)))") }
    }
}

/// close(2), outside `Database`, whose `close()` would shadow it.
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
