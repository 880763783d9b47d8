#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one lock type: a value guarded by a pthread read-write lock. Reads (every request
/// looking at a cache or the server state) proceed together; writes (a new signature, a reload)
/// are rare and exclusive. With a plain mutex the worker threads queued behind each other on
/// every request.
///
/// `read`, `withLock` and `current` are inlinable so that callers in other modules get them
/// specialized for their value type: unspecialized, `current` is a generic call through value
/// witnesses, and the server reads its state on every request (measured: see
/// docs/performance.md).
public final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let lock: UnsafeMutablePointer<pthread_rwlock_t>
    @usableFromInline var value: Value

    public init(_ value: Value) {
        self.value = value
        // Heap-allocated: a pthread lock must not move in memory.
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Shared access; several readers run at once.
    @inlinable
    public func read<T, E: Error>(_ body: (Value) throws(E) -> T) throws(E) -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    /// Exclusive access.
    @inlinable
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }

    /// A copy of the value.
    @inlinable
    public var current: Value { read { $0 } }
}
