/// A problem in one file of `Entities/`; start-up stops with this message, which names the file and the field.
public struct EntityFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public let file: String
    public let field: String?
    public let message: String

    public init(file: String, field: String?, _ message: String) {
        self.file = file
        self.field = field
        self.message = message
    }

    public var description: String {
        if let field { return "\(file): field \"\(field)\": \(message)" }
        return "\(file): \(message)"
    }
}
