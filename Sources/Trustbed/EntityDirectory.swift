import Dispatch
import Federation
import JSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What identifies one version of a file without reading it: a reload re-parses a file only when
/// its stamp changed. The inode catches an editor's write-to-temp-then-rename even when size and
/// modification time happen to match.
struct FileStamp: Equatable, Sendable {
    let size: Int64
    let modifiedSeconds: Int64
    let modifiedNanoseconds: Int64
    let inode: UInt64

    init(_ s: stat) {
        size = Int64(s.st_size)
        #if canImport(Darwin)
        modifiedSeconds = Int64(s.st_mtimespec.tv_sec)
        modifiedNanoseconds = Int64(s.st_mtimespec.tv_nsec)
        #else
        modifiedSeconds = Int64(s.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(s.st_mtim.tv_nsec)
        #endif
        inode = UInt64(s.st_ino)
    }

    /// The stamp of `path`, or nil when it cannot be stat'ed.
    static func of(_ path: String) -> FileStamp? {
        var s = stat()
        guard stat(path, &s) == 0 else { return nil }
        return FileStamp(s)
    }
}

/// What a reload needs from the previous load: its entities (in name order, shared with the
/// catalog, not a copy) and the stamp of the file each came from. Only stamps are kept, not the
/// parsed files: at 100,000 entities a second copy of every declaration was most of the memory.
/// An unchanged file's entity is reused as built, as long as every entity ID it names still
/// means what it meant (see `EntityCatalog.load`); 100,000 unchanged files then cost a `stat` each.
public struct EntitySources: Sendable {
    let entities: [HostedEntity]
    let stamps: [FileStamp]
    let baseURL: String
    /// How many files the load that produced this value read and parsed (the rest were reused).
    public internal(set) var parsedCount = 0

    public init() { self.init(entities: [], stamps: [], baseURL: "") }

    init(entities: [HostedEntity], stamps: [FileStamp], baseURL: String, parsedCount: Int = 0) {
        self.entities = entities
        self.stamps = stamps
        self.baseURL = baseURL
        self.parsedCount = parsedCount
    }

    public var count: Int { entities.count }

    /// File name (with `.json`) → the previous entity and its file's stamp, for `EntityDirectory.readAll`.
    func byFileName(baseURL: String) -> EntityDirectory.Previous {
        // Entities built against another base URL hold other IDs and placeholders: none is reusable.
        guard baseURL == self.baseURL else { return [:] }
        var out: EntityDirectory.Previous = [:]
        out.reserveCapacity(entities.count)
        for (e, stamp) in zip(entities, stamps) { out[e.name + ".json"] = (stamp, e) }
        return out
    }
}

/// One file of a load: its previous entity reused as is, or the file parsed anew.
enum EntitySource: Sendable {
    case reused(HostedEntity)
    case parsed(EntityFile)

    var name: String {
        switch self {
        case .reused(let e): return e.name
        case .parsed(let f): return f.name
        }
    }
}

/// Reading `Entities/` with plain POSIX calls, in parallel: at 100,000 files the per-file cost of
/// Foundation (`FileManager.contents`, `NSString` path joins, `Data` → `Array`) dominated.
enum EntityDirectory {
    /// File name (with `.json`) → the entity a previous load built from it and the file's stamp then.
    typealias Previous = [String: (stamp: FileStamp, entity: HostedEntity)]

    /// Names of the `*.json` files in `directory`, sorted.
    static func fileNames(_ directory: String) throws(EntityFileError) -> [String] {
        guard let dir = opendir(directory) else {
            let reason = String(cString: strerror(errno))
            throw EntityFileError(file: directory, field: nil, "cannot read the entities directory: \(reason)")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { p in
                p.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) { String(cString: $0) }
            }
            if name.hasSuffix(".json") { names.append(name) }
        }
        return names.sorted()
    }

    /// Reads and parses every file of `names` (in `directory`, which ends with "/"), reusing the
    /// previous entity of a file whose stamp is unchanged. The first failure in name order is
    /// thrown, exactly as a sequential load would. `parsed` counts the files actually read.
    static func readAll(_ directory: String, names: [String], previous: Previous,
                        parsed: inout Int) throws(EntityFileError) -> [(source: EntitySource, stamp: FileStamp)] {
        let outcomes = parallelMap(names.count) { i in
            outcome(names[i], path: directory + names[i], previous: previous[names[i]])
        }
        var out: [(source: EntitySource, stamp: FileStamp)] = []
        out.reserveCapacity(names.count)
        for o in outcomes {
            switch o {
            case .failure(let error): throw error
            case .success(let item):
                if case .parsed = item.source { parsed += 1 }
                out.append(item)
            }
        }
        return out
    }

    /// `body(0..<count)` on all cores, in order. Chunks rather than one iteration per element:
    /// a dispatch per 200-byte file would cost more than its parse.
    static func parallelMap<T>(_ count: Int, _ body: @Sendable (Int) -> T) -> [T] {
        let workers = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let chunkSize = max(64, count / (workers * 8) + 1)
        let chunks = (count + chunkSize - 1) / chunkSize
        return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            let out = UnsafeSendableBuffer(buffer)
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                for i in chunk * chunkSize ..< min(count, (chunk + 1) * chunkSize) {
                    (out.buffer.baseAddress! + i).initialize(to: body(i))
                }
            }
            initialized = count
        }
    }

    private static func outcome(_ fileName: String, path: String,
                                previous: (stamp: FileStamp, entity: HostedEntity)?) -> Result<(source: EntitySource, stamp: FileStamp), EntityFileError> {
        let name = String(fileName.dropLast(".json".count))
        guard !name.isEmpty, name.utf8.allSatisfy(Self.isPlainNameByte)
                || name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
            return .failure(EntityFileError(file: path, field: nil, "an entity name may only hold letters, digits, '-', '_' and '.'"))
        }
        if let previous, let stamp = FileStamp.of(path), stamp == previous.stamp {
            return .success((.reused(previous.entity), stamp))
        }
        guard let (bytes, stamp) = readFile(path) else { return .failure(EntityFileError(file: path, field: nil, "cannot be read")) }
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch {
            return .failure(EntityFileError(file: path, field: nil, "is not valid JSON: \(error)"))
        }
        do {
            return .success((.parsed(try EntityFile(name: name, file: path, json: json)), stamp))
        } catch {
            return .failure(error)
        }
    }

    /// Gives the pages freed by a load back to the system. Parsing 100,000 files makes a few
    /// hundred megabytes of short-lived JSON trees on every worker thread's malloc arena; glibc
    /// keeps freed arena memory mapped, so without this the process stays at its load peak
    /// (measured: see docs/performance.md).
    static func releaseFreedMemory() {
        #if canImport(Glibc)
        // Looked up at run time: Swift's Glibc module does not export <malloc.h>. RTLD_DEFAULT is 0.
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
    }

    /// ASCII letters, digits, '-', '_', '.': the common case, checked without Unicode tables
    /// (non-ASCII letters are still allowed, through the Character check).
    private static func isPlainNameByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "0") ... UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."): return true
        default: return false
        }
    }

    /// The whole file and the stamp of what was read (fstat on the open descriptor, so a file
    /// replaced meanwhile is not paired with the other version's stamp).
    static func readFile(_ path: String) -> ([UInt8], FileStamp)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var s = stat()
        guard fstat(fd, &s) == 0, (s.st_mode & S_IFMT) == S_IFREG else { return nil }
        // One byte more than the size, so a single read normally also sees the end of the file.
        var capacity = max(0, Int(s.st_size)) + 1
        var bytes: [UInt8] = []
        while true {
            var failed = false
            bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                count = 0
                while count < capacity {
                    let n = read(fd, buffer.baseAddress! + count, capacity - count)
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 { failed = true; return }
                    if n == 0 { return }
                    count += n
                }
            }
            if failed { return nil }
            if bytes.count < capacity { break }
            // The file grew while we read it: start over with room to spare.
            guard lseek(fd, 0, SEEK_SET) == 0 else { return nil }
            capacity *= 2
        }
        return (bytes, FileStamp(s))
    }
}

/// A buffer written by disjoint indices from `concurrentPerform` workers; each index has exactly
/// one writer and the buffer outlives the call, which is what makes this sound.
private struct UnsafeSendableBuffer<T>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<T>
    init(_ buffer: UnsafeMutableBufferPointer<T>) { self.buffer = buffer }
}
