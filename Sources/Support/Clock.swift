import Foundation

/// The single source of "now" (Unix seconds), injectable so tests can move time.
public protocol Clock: Sendable {
    func now() -> Int64
}

public struct SystemClock: Clock {
    public init() {}
    public func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
}

/// A clock tests set by hand.
public final class ManualClock: Clock, Sendable {
    private let current: Locked<Int64>
    public init(_ start: Int64) { current = Locked(start) }
    public func now() -> Int64 { current.current }
    public func advance(_ seconds: Int64) { current.withLock { $0 += seconds } }
    public func set(_ value: Int64) { current.withLock { $0 = value } }
}
