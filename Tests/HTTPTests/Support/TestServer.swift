import HTTP
import JSON
import Logging
import XCTest

/// Log lines kept in memory so tests can check the access log.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []

    var lines: [String] { lock.withLock { storage } }
    func append(_ line: String) { lock.withLock { storage.append(line) } }

    var logger: Logger {
        Logger(label: "http-tests") { _ in CapturingLogHandler(capture: self) }
    }
}

struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        capture.append("\(event.level) \(event.message)")
    }
}

/// Starts a server on an ephemeral port for one test and stops it afterwards.
func startServer(
    _ configuration: HTTPServerConfiguration = HTTPServerConfiguration(port: 0, threads: 2),
    log: LogCapture = LogCapture(),
    handler: @escaping HTTPHandler = echoHandler
) throws -> HTTPServer {
    let server = HTTPServer(configuration: configuration, logger: log.logger, handler: handler)
    try server.start()
    return server
}

/// Built once and served many times, as cached statements are.
let preparedHello = HTTPResponse.text("hello", contentType: "application/example").adding(header: "X-Kept", "1")
    .applying(.publicRead).prepared()

/// Starts a server answering through `site`.
func startServer<Context>(
    site: Site<Context>, _ configuration: HTTPServerConfiguration = HTTPServerConfiguration(port: 0, threads: 2),
    log: LogCapture = LogCapture()
) throws -> HTTPServer {
    try startServer(configuration, log: log) { request in site.respond(to: request) }
}

/// Describes the request back as JSON, readable by any origin (as a public route's answers).
let echoHandler: HTTPHandler = { request in echo(request).applying(.publicRead) }

/// Describes the request back as JSON; a few paths answer specially.
func echo(_ request: HTTPRequest) -> HTTPResponse {
    switch request.path {
    case "/prepared":
        return preparedHello
    case "/prepared-changed":
        var changed = preparedHello
        changed.body = Array("changed".utf8)
        return changed
    case "/no-type":
        return HTTPResponse(status: 200, body: Array("raw".utf8))
    case "/own-origin":
        return .text("mine").adding(header: "Access-Control-Allow-Origin", "https://wallet.example")
    case "/no-store":
        return .json(["ok": true]).adding(header: "Cache-Control", "no-store")
    case "/form":
        guard let form = request.formParameters() else {
            return .error(status: 415, code: "invalid_request", description: "not a form")
        }
        return .json(.array(form.map { .array([.string($0.name), .string($0.value)]) }))
    case "/json":
        do throws(HTTPError) {
            return .json(["received": try request.jsonBody()])
        } catch {
            return error.response
        }
    default:
        var headers: [String: JSONValue] = [:]
        for (name, value) in request.headers { headers[name] = .string(value) }
        return .json([
            "method": .string(request.method.name),
            "path": .string(request.path),
            "raw_query": request.rawQuery.map { .string($0) } ?? .null,
            "query": .array(request.query.map { .array([.string($0.name), .string($0.value)]) }),
            "headers": .object(headers),
            "body": .string(String(decoding: request.body, as: UTF8.self)),
            "remote": .string(request.remoteAddress),
        ])
    }
}

extension RawResponse {
    var json: JSONValue? { try? JSONValue.parse(body) }
}

/// One request on a fresh connection.
func roundTrip(_ port: UInt16, _ request: String, head: Bool = false) throws -> RawResponse {
    let connection = try RawHTTPConnection(port: port)
    connection.send(request)
    return try connection.readResponse(head: head)
}
