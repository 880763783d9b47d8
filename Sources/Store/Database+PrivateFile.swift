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
    /// Creates `path` mode 0600 when it does not exist yet, and any missing folder above it mode
    /// 0700, before SQLite opens it. SQLite gives the -wal and -shm files the mode of the
    /// database file (os_unix.c, findCreateFileMode), so they are 0600 too. An existing file or
    /// folder keeps its mode: an operator may have widened it on purpose.
    static func createPrivately(_ path: String) throws(StoreError) {
        // ":memory:" and "" (a private temporary database) are not files.
        guard !path.isEmpty, path != ":memory:" else { return }
        try createFolders(above: path)
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return }
            throw .cannotOpen("\(path): \(String(cString: strerror(errno)))")
        }
        // The umask may have taken bits off 0600 (e.g. 0277 leaves 0400): set it exactly.
        let changed = fchmod(fd, 0o600)
        closeDescriptor(fd)
        guard changed == 0 else { throw .cannotOpen("\(path): \(String(cString: strerror(errno)))") }
    }

    /// Every missing folder on the way to `path`'s parent, created 0700 (exactly, not masked).
    private static func createFolders(above path: String) throws(StoreError) {
        var components = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        var missing: [String] = []
        while !components.isEmpty {
            let folder = components.joined(separator: "/")
            if folder.isEmpty || access(folder, F_OK) == 0 { break }
            missing.append(folder)
            components = components.dropLast()
        }
        for folder in missing.reversed() {
            if mkdir(folder, 0o700) == 0 {
                chmod(folder, 0o700)
            } else if errno != EEXIST {
                throw .cannotOpen("\(folder): \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// close(2), outside `Database`, whose `close()` would shadow it.
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
