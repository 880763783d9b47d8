import Foundation
import JSON
import Support

/// Why a wallet run failed; `description` is what the user sees (a server's OAuth error JSON is
/// printed as it came).
public enum WalletError: Error, CustomStringConvertible {
    case transport(String)
    /// A server answered with an error: the step, the status and the body (RFC 6749 §5.2 JSON).
    case server(step: String, status: Int, body: String)
    /// A server's answer did not follow the spec.
    case malformed(String)
    case verification(String)
    case usage(String)

    public var description: String {
        switch self {
        case .transport(let why): return "transport: \(why)"
        case .server(let step, let status, let body): return "\(step): HTTP \(status): \(body.isEmpty ? "(empty body)" : body)"
        case .malformed(let why): return "bad answer: \(why)"
        case .verification(let why): return "verification failed: \(why)"
        case .usage(let why): return why
        }
    }

    /// A JSON read error as a malformed-answer error naming what was being read.
    public static func read(_ what: String, _ error: Error) -> WalletError { .malformed("\(what): \(error)") }
}

/// Runs a JSONReader-based parse, turning its error into a malformed-answer error about `what`.
public func reading<T>(_ what: String, _ body: () throws(JSONReadError) -> T) throws(WalletError) -> T {
    do { return try body() } catch { throw WalletError.read(what, error) }
}

/// A Credential Offer (OpenID4VCI 1.0 §4.1.1): the issuer, the offered configurations and the
/// grants the wallet may use.
public struct CredentialOffer {
    public static let preAuthorizedGrant = "urn:ietf:params:oauth:grant-type:pre-authorized_code"

    public struct PreAuthorizedGrant {
        public let code: String
        /// The tx_code object (§4.1.1): present when the wallet must send a transaction code.
        public let txCode: (inputMode: String, length: Int?, description: String?)?
        public let authorizationServer: String?
    }

    public struct AuthorizationCodeGrant {
        public let issuerState: String?
        public let authorizationServer: String?
    }

    public let credentialIssuer: String
    public let configurationIDs: [String]
    public let preAuthorized: PreAuthorizedGrant?
    public let authorizationCode: AuthorizationCodeGrant?
    public let json: JSONValue

    public init(json value: JSONValue) throws {
        self = try reading("credential offer") { () throws(JSONReadError) in try CredentialOffer(reading: value) }
    }

    private init(reading value: JSONValue) throws(JSONReadError) {
        json = value
        do {
            let reader = try JSONReader(value)
            credentialIssuer = try reader.url("credential_issuer")
            configurationIDs = try reader.stringArray("credential_configuration_ids", nonEmpty: true)
            let grants = try reader.optionalObject("grants")
            if let pre = try grants?.optionalObject(Self.preAuthorizedGrant) {
                var txCode: (String, Int?, String?)?
                if let tx = try pre.optionalObject("tx_code") {
                    let length = try tx.optionalInt("length").map(Int.init)
                    txCode = (try tx.optionalString("input_mode") ?? "numeric", length, try tx.optionalString("description"))
                }
                preAuthorized = PreAuthorizedGrant(
                    code: try pre.nonEmptyString("pre-authorized_code"), txCode: txCode,
                    authorizationServer: try pre.optionalString("authorization_server"))
            } else {
                preAuthorized = nil
            }
            if let code = try grants?.optionalObject("authorization_code") {
                authorizationCode = AuthorizationCodeGrant(
                    issuerState: try code.optionalString("issuer_state"),
                    authorizationServer: try code.optionalString("authorization_server"))
            } else {
                authorizationCode = nil
            }
        }
    }

    /// Resolves what a person hands the wallet (§4.1): an `openid-credential-offer://` (or any
    /// other scheme's) URL carrying `credential_offer` or `credential_offer_uri`, an https
    /// `credential_offer_uri` itself, or the offer JSON.
    public static func resolve(_ input: String, http: WalletHTTP) throws -> CredentialOffer {
        let text = input.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("{") { return try parse(Array(text.utf8), what: "credential offer") }
        guard let schemeEnd = text.range(of: "://") else {
            throw WalletError.usage("the offer must be an openid-credential-offer:// URL, an https URL or JSON")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        let query = text.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
        let parameters = Parameters(encoded: query.split(separator: "#", maxSplits: 1).first.map(String.init) ?? "")
        let byValue = parameters.all("credential_offer"), byReference = parameters.all("credential_offer_uri")
        // §4.1: exactly one of the two.
        if byValue.count + byReference.count > 1 {
            throw WalletError.malformed("the offer URL must carry exactly one credential_offer or credential_offer_uri")
        }
        if let value = byValue.first { return try parse(Array(value.utf8), what: "credential_offer") }
        let uri: String
        if let reference = byReference.first {
            uri = reference
        } else if scheme == "https" || scheme == "http" {
            uri = text
        } else {
            throw WalletError.usage("the offer URL carries neither credential_offer nor credential_offer_uri")
        }
        // §4.1.3: a GET of the URI answers the offer as application/json.
        let reply = try http.get(uri)
        guard reply.status == 200 else { throw WalletError.server(step: "credential_offer_uri", status: reply.status, body: reply.text) }
        return try parse(reply.body, what: "credential_offer_uri answer")
    }

    private static func parse(_ bytes: [UInt8], what: String) throws -> CredentialOffer {
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch { throw WalletError.malformed("\(what) is not JSON: \(error)") }
        return try CredentialOffer(json: value)
    }
}

/// Well-known URLs (RFC 8414 §3.1, OpenID4VCI 1.0 §12.2.2): the suffix inserted between the host
/// and the path of the identifier, and the older form that appends it. Without a path both are
/// the same URL.
public enum WellKnown {
    public static func candidates(_ identifier: String, _ suffix: String) -> [String] {
        let trimmed = identifier.hasSuffix("/") ? String(identifier.dropLast()) : identifier
        guard let schemeEnd = trimmed.range(of: "://") else { return [trimmed + "/.well-known/" + suffix] }
        let afterScheme = trimmed[schemeEnd.upperBound...]
        guard let slash = afterScheme.firstIndex(of: "/") else { return [trimmed + "/.well-known/" + suffix] }
        let origin = String(trimmed[..<slash]), path = String(trimmed[slash...])
        return [origin + "/.well-known/" + suffix + path, trimmed + "/.well-known/" + suffix]
    }

    /// The first candidate that answers 200 with a JSON object. When none does, the error names
    /// every URL tried and what it answered, so a user sees both placements were looked at.
    public static func fetch(_ identifier: String, _ suffix: String, http: WalletHTTP) throws -> (url: String, json: [String: JSONValue]) {
        var failures: [String] = []
        if let found = try fetch(identifier, suffix, http: http, failures: &failures) { return found }
        throw WalletError.malformed("no \(suffix) metadata for \(identifier); tried \(failures.joined(separator: "; "))")
    }

    /// The same, adding what each URL answered to `failures` (a transport error too: the next
    /// placement may still answer); nil when none gave a JSON object.
    public static func fetch(_ identifier: String, _ suffix: String, http: WalletHTTP,
                             failures: inout [String]) throws -> (url: String, json: [String: JSONValue])? {
        for url in candidates(identifier, suffix) {
            let reply: WalletHTTP.Reply
            do { reply = try http.get(url) } catch let error as WalletError {
                failures.append("\(url) (\(error))")
                continue
            }
            if reply.status == 200, let json = reply.json { return (url, json) }
            failures.append("\(url) (HTTP \(reply.status)\(reply.status == 200 ? ", not a JSON object" : ""))")
        }
        return nil
    }
}
