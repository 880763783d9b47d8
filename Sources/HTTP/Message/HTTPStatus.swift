/// A response status code. Integer literals convert (`status: 404`), and the named constants
/// cover what the protocols here use.
public struct HTTPStatus: Hashable, Comparable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public let code: Int

    public init(code: Int) { self.code = code }
    public init(integerLiteral code: Int) { self.code = code }

    public static func < (a: HTTPStatus, b: HTTPStatus) -> Bool { a.code < b.code }
    public var description: String { String(code) }

    /// 2xx.
    public var isSuccess: Bool { (200...299).contains(code) }
    /// 5xx: the server's fault, worth a log line.
    public var isServerError: Bool { (500...599).contains(code) }

    public static let ok: HTTPStatus = 200
    public static let created: HTTPStatus = 201
    public static let accepted: HTTPStatus = 202
    public static let noContent: HTTPStatus = 204
    public static let movedPermanently: HTTPStatus = 301
    public static let found: HTTPStatus = 302
    public static let seeOther: HTTPStatus = 303
    public static let notModified: HTTPStatus = 304
    public static let temporaryRedirect: HTTPStatus = 307
    public static let badRequest: HTTPStatus = 400
    public static let unauthorized: HTTPStatus = 401
    public static let forbidden: HTTPStatus = 403
    public static let notFound: HTTPStatus = 404
    public static let methodNotAllowed: HTTPStatus = 405
    public static let notAcceptable: HTTPStatus = 406
    public static let conflict: HTTPStatus = 409
    public static let gone: HTTPStatus = 410
    public static let payloadTooLarge: HTTPStatus = 413
    public static let uriTooLong: HTTPStatus = 414
    public static let unsupportedMediaType: HTTPStatus = 415
    public static let unprocessableContent: HTTPStatus = 422
    public static let tooManyRequests: HTTPStatus = 429
    public static let internalServerError: HTTPStatus = 500
    public static let notImplemented: HTTPStatus = 501
    public static let badGateway: HTTPStatus = 502
    public static let serviceUnavailable: HTTPStatus = 503
    public static let gatewayTimeout: HTTPStatus = 504
}
