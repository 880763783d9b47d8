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
