import CSQLite
import Dispatch
import Synchronization

/// Copies WAL frames back into the database file on a background queue, for a connection that
/// commits often (the issuers').
///
/// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL pages, on the
/// committing thread and under `Database`'s lock: that commit then copies the pages and waits
/// for two fsyncs while every other request queues behind the lock, and the cores idle. Moved
/// off the committing thread, and with 1 KiB pages (Database.configure) so there is less to
/// copy, the writers no longer wait for it (idle and I/O wait measured: see
/// docs/performance.md). Durability is unchanged: a commit is in the WAL either way, and a
/// checkpoint only moves it.
///
/// A background (PASSIVE) checkpoint never catches up with a busy writer, and SQLite rewinds
/// the WAL only when a write transaction starts with every frame copied. So once the WAL is
/// past `Limits.rewind`, the background checkpoint copies the bulk first and then pauses the
/// writer for a second, short pass over what came meanwhile; the next commit rewinds the WAL.
final class WALCheckpointer: @unchecked Sendable {
    /// WAL sizes in pages (1 KiB each in files made since page_size 1024, 4 KiB before).
    /// A checkpoint copies each page once however often the WAL holds it, so a longer interval
    /// copies fewer pages per commit (measured: see docs/performance.md). The price: the WAL
    /// grows to `rewind` pages or more (about 16 MB of 1 KiB pages) before it rewinds, and
    /// recovery after a crash reads that much once.
    struct Limits: Sendable {
        /// A background checkpoint is queued.
        var background: Int32 = 8_000
        /// The background checkpoint finishes with the writer paused, so the WAL rewinds.
        var rewind: Int32 = 16_000
        /// The committing thread checkpoints itself: the background is not keeping up.
        var inline: Int32 = 64_000
    }

    private let limits: Limits
    /// Runs its argument while no commit can happen (the writer's `Database` lock).
    private let pausingWriter: @Sendable (() -> Void) -> Void
    private let path: String
    private let queue = DispatchQueue(label: "trustbed.store.checkpoint", qos: .utility)
    /// WAL size at which the next background checkpoint is queued: one per `background` new
    /// pages, not one per commit once the WAL is past the first threshold (each checkpoint has
    /// a fixed cost: two fsyncs and an index of the frames to copy).
    private let nextCheckpointAt: Atomic<Int32>
    /// Opened on the queue at the first checkpoint, closed by `close`; touched only on `queue`.
    private var connection: OpaquePointer?
    private var closed = false

    init(path: String, limits: Limits = Limits(), pausingWriter: @escaping @Sendable (() -> Void) -> Void) {
        self.path = path
        self.limits = limits
        self.pausingWriter = pausingWriter
        nextCheckpointAt = Atomic(limits.background)
    }

    /// Takes over checkpointing for `writer`: turns its automatic checkpoint off and has every
    /// commit report the WAL's size here. `writer` must be closed before this object goes.
    func attach(to writer: OpaquePointer) {
        sqlite3_wal_autocheckpoint(writer, 0)
        sqlite3_wal_hook(writer, { context, writer, _, pages in
            let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context!).takeUnretainedValue()
            checkpointer.committed(pages: pages, writer: writer)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Called by SQLite after each commit on the writer, with the writer's lock held.
    private func committed(pages: Int32, writer: OpaquePointer?) {
        if pages >= limits.inline {
            // A checkpoint from inside the hook is what SQLite's own auto-checkpoint does.
            sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            return
        }
        let mark = nextCheckpointAt.load(ordering: .acquiring)
        if pages + limits.background < mark {
            // The WAL was rewound: count from its start again.
            nextCheckpointAt.store(limits.background, ordering: .releasing)
            return
        }
        guard pages >= mark,
              nextCheckpointAt.compareExchange(expected: mark, desired: pages + limits.background,
                                               ordering: .acquiringAndReleasing).exchanged
        else { return }
        queue.async { [self] in checkpoint() }
    }

    /// PASSIVE: copies what no reader still needs and never blocks the writer.
    private func checkpoint() {
        guard !closed else { return }
        if connection == nil {
            var handle: OpaquePointer?
            guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
                sqlite3_close_v2(handle)
                return
            }
            // NORMAL: the checkpoint fsyncs the WAL before copying and the file after, as an
            // automatic checkpoint of a synchronous=NORMAL writer would.
            sqlite3_exec(handle, "PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL", nil, nil, nil)
            connection = handle
        }
        var logPages: Int32 = 0
        sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, &logPages, nil)
        guard logPages >= limits.rewind else { return }
        // No frame can be added during this pass, so it copies everything: the next write
        // transaction starts the WAL over.
        pausingWriter { sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) }
    }

    /// Waits for a running checkpoint and closes the checkpoint connection; later commits
    /// queue nothing.
    func close() {
        queue.sync {
            closed = true
            sqlite3_close_v2(connection)
            connection = nil
        }
    }
}
