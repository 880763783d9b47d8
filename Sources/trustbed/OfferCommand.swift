import ArgumentParser
import Foundation
import JSON
import Wallet

/// `trustbed offer`: asks a running server's admin API for a credential offer (issue 7 item 3)
/// and prints what a tester needs: the wallet link, the tx_code, the page with the QR code.
struct OfferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offer",
        abstract: "Create a credential offer on a running server's PID Provider (POST <issuer>/admin/offers).")

    @Option(help: "Persona id (from the issuer's personas).") var persona: String
    @Option(name: .customLong("credential"), help: "Credential configuration id (repeatable; default: every configuration).")
    var credentials: [String] = []
    @Option(help: "pre-authorized_code or authorization_code.") var grant = "pre-authorized_code"
    @Flag(name: .customLong("tx-code"), help: "Require a transaction code (pre-authorized_code only).") var txCode = false
    @Option(help: "Issuer: an entity name on --server, or the issuer's URL.") var issuer = "pid-provider"
    @Option(help: "The server's base URL.") var server = "http://127.0.0.1:8080"
    @Option(help: ArgumentHelp("Admin token.", discussion: "Without it: the TRUSTBED_ADMIN_TOKEN variable, else <keys>/admin-token."))
    var adminToken: String?
    @Option(help: "Directory of entity keys (where the server keeps admin-token).") var keys = "Keys"
    @Flag(help: "Print the server's whole JSON answer instead of the summary.") var json = false

    func validate() throws {
        guard ["pre-authorized_code", "authorization_code"].contains(grant) else {
            throw ValidationError("--grant must be pre-authorized_code or authorization_code")
        }
        if txCode && grant != "pre-authorized_code" { throw ValidationError("--tx-code needs the pre-authorized_code grant") }
    }

    func run() throws {
        let issuerURL = issuer.contains("://") ? issuer : server.trimmingSuffix("/") + "/" + issuer
        var request: [String: JSONValue] = ["persona": .string(persona), "grant": .string(grant), "tx_code": .bool(txCode)]
        if !credentials.isEmpty { request["credential_configuration_ids"] = JSONValue(credentials) }
        let response = try WalletHTTP().postJSON(issuerURL.trimmingSuffix("/") + "/admin/offers", .object(request),
                                                 headers: ["Authorization: Bearer \(try token())"])
        guard response.status == 201, let object = response.json else {
            throw WalletError.server(step: "admin offers", status: response.status, body: response.text)
        }
        let answer = JSONValue.object(object)
        if json {
            print(answer.serialized(pretty: true))
            return
        }
        print("offer_url:  \(answer["offer_url"]?.stringValue ?? "")")
        if let tx = answer["tx_code"]?.stringValue { print("tx_code:    \(tx)") }
        print("offer_page: \(answer["offer_page"]?.stringValue ?? "")")
        print("offer_uri:  \(answer["credential_offer_uri"]?.stringValue ?? "")")
    }

    /// `--admin-token`, else `TRUSTBED_ADMIN_TOKEN`, else the file the server created: the
    /// order the server itself uses.
    private func token() throws -> String {
        if let adminToken, !adminToken.isEmpty { return adminToken }
        if let env = ProcessInfo.processInfo.environment["TRUSTBED_ADMIN_TOKEN"], !env.isEmpty { return env }
        let path = keys + "/admin-token"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              case let token = text.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty else {
            throw ValidationError("no admin token: pass --admin-token, set TRUSTBED_ADMIN_TOKEN, or run where \(path) exists")
        }
        return token
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
