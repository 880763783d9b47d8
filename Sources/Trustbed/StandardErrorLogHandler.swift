import Logging

/// swift-log handler writing "timestamp level label: message key=value" lines through a
/// `LogSink` (standard error, batched). swift-log's stream handler formats a full local
/// timestamp and flushes stdio per line, which cost more than serving a cached statement.
public struct StandardErrorLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let sink: LogSink

    public init(label: String, sink: LogSink) {
        self.label = label
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        let rendered = merged.isEmpty
            ? nil : merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        sink.append(level: event.level, label: label, message: event.message.description, metadata: rendered)
    }
}
