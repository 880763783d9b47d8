import HTTPClient
import JSON
import Wallet

/// Answers the wallet's exchanges from a closure and records them: the wallet's protocol code
/// runs against it without a server.
final class StubTransport: WalletTransport {
    struct Request {
        let method: String
        let url: String
        let headers: [String]
        let body: [UInt8]?
        func header(_ name: String) -> String? {
            headers.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }.map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
    }

    private let answer: (Request) -> WalletHTTP.Reply
    private(set) var requests: [Request] = []

    init(_ answer: @escaping (Request) -> WalletHTTP.Reply) { self.answer = answer }

    func send(_ method: String, _ url: String, headers: [String], body: [UInt8]?) throws -> WalletHTTP.Reply? {
        let request = Request(method: method, url: url, headers: headers, body: body)
        requests.append(request)
        return answer(request)
    }

    static func reply(_ status: Int, _ json: JSONValue? = nil, headers: [(String, String)] = []) -> WalletHTTP.Reply {
        var fields = HeaderFields()
        if json != nil { fields.add("content-type", "application/json") }
        for (name, value) in headers { fields.add(name.lowercased(), value) }
        return WalletHTTP.Reply(status: status, body: json?.bytes ?? [], headers: fields)
    }
}
