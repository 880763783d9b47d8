import Foundation

/// Files that hold secrets (private keys, tokens): created with O_EXCL and mode 0600, so a
/// file is never overwritten and two processes starting at once cannot both create it (the
/// loser gets `fileWriteFileExists` and reads the winner's file).
public enum ExclusiveFile {
    /// Creates `path` with `text`; `durable` fsyncs the contents before returning.
    public static func create(_ path: String, _ text: String, durable: Bool = true) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: path]) }
        defer { close(fd) }
        // The umask can only take bits off 0600; set it exactly so the owner can always rewrite.
        fchmod(fd, 0o600)
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
            written += n
        }
        guard !durable || fsync(fd) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
    }
}

/// Folders that hold secrets (key folders): every folder this creates is mode 0700 exactly,
/// whatever the umask (a shell's 022 would leave 0755; systemd's unit sets 0077, but the server
/// also runs outside it). Folders that exist keep their mode.
public enum PrivateDirectory {
    /// Creates `path` and any missing folder above it.
    public static func create(_ path: String) throws {
        var missing: [String] = []
        var folder = path
        while !folder.isEmpty, folder != "/", access(folder, F_OK) != 0 {
            missing.append(folder)
            folder = (folder as NSString).deletingLastPathComponent
        }
        for folder in missing.reversed() {
            if mkdir(folder, 0o700) == 0 {
                chmod(folder, 0o700)
            } else if errno != EEXIST {
                throw CocoaError(.fileWriteUnknown, userInfo: [
                    NSFilePathErrorKey: folder, NSLocalizedDescriptionKey: "\(folder): \(String(cString: strerror(errno)))",
                ])
            }
        }
    }
}
