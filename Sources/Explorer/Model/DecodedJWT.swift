import Federation
import Foundation
import JOSE
import JSON

/// A JWT as the explorer shows it: the raw compact form (to copy), the header and claims as
/// JSON, its times also in human form, and the URL of the endpoint that served it. Every part is
/// data from whoever signed it; the pages escape it.
struct DecodedJWT: Sendable {
    let compact: String
    let header: JSONValue
    let claims: JSONValue
    /// `iat`, `exp` (and `nbf` when present) with their human form, in that order.
    let times: [(claim: String, seconds: Int64)]
    /// Where this JWT was served from (`<id>/.well-known/openid-federation`, `<sup>/fetch?sub=`).
    let servedBy: String?

    /// Nil when `compact` is not a JWS with a JSON object payload (then there is nothing to decode).
    init?(_ compact: String, servedBy: String?) {
        guard let parsed = try? JWS.parseClaims(compact) else { return nil }
        self.compact = compact
        header = .object(parsed.jws.header)
        claims = .object(parsed.claims)
        times = ["iat", "nbf", "exp"].compactMap { name in parsed.claims[name]?.intValue.map { (name, $0) } }
        self.servedBy = servedBy
    }

    var keyID: String? { header["kid"]?.stringValue }
}

/// The outcome of checking a statement's signature, said in words.
struct SignatureVerdict: Sendable, Equatable {
    let verifies: Bool
    /// The `kid` of the header, and whether a key with it was found among the keys tried.
    let keyID: String
    let detail: String

    /// `statement` checked against `keys` (`whose` says whose keys they are, for the page).
    static func check(_ statement: EntityStatement, with keys: JWKSet, whose: String) -> SignatureVerdict {
        let kid = statement.keyID
        guard let key = keys.key(withID: kid) else {
            return SignatureVerdict(verifies: false, keyID: kid, detail: "no key with kid \(kid) in \(whose)")
        }
        do {
            try statement.verify(with: JWKSet(keys: [key]))
            return SignatureVerdict(verifies: true, keyID: kid, detail: "verifies with \(whose), key \(kid) (\(key.kty)\(key.json["crv"]?.stringValue.map { " " + $0 } ?? ""))")
        } catch {
            return SignatureVerdict(verifies: false, keyID: kid, detail: error.message)
        }
    }
}

/// One key of a `jwks` (or of the historical keys), by the members people look for.
struct KeyRow: Sendable, Equatable {
    let kid: String
    let kty: String
    let crv: String
    let alg: String
    let use: String
    /// Historical keys only: until when it was valid, and its revocation, if any (section 8.7).
    let exp: Int64?
    let revokedAt: Int64?
    let reason: String?

    init(_ key: JWK) {
        let j = key.json
        kid = j["kid"]?.stringValue ?? "(no kid)"
        kty = key.kty
        crv = j["crv"]?.stringValue ?? ""
        alg = j["alg"]?.stringValue ?? ""
        use = j["use"]?.stringValue ?? ""
        exp = j["exp"]?.intValue
        revokedAt = j["revoked"]?["revoked_at"]?.intValue
        reason = j["revoked"]?["reason"]?.stringValue
    }

    /// From JSON that may not be a valid JWK (a remote `jwks` is shown even when it is broken).
    static func rows(_ jwks: JSONValue?) -> [KeyRow] {
        (jwks?["keys"]?.arrayValue ?? []).compactMap { $0.objectValue.flatMap { try? JWK(json: $0) }.map(KeyRow.init) }
    }
}

/// Why an explorer page could not show what was asked, as a status and words. The endpoints
/// turn it into a page in the layout; nothing here knows HTTP beyond the number.
struct ExplorerFailure: Error, Sendable, Equatable {
    let status: Int
    let title: String
    let message: String

    static func badRequest(_ message: String) -> ExplorerFailure { .init(status: 400, title: "Bad request", message: message) }
    static func notFound(_ message: String) -> ExplorerFailure { .init(status: 404, title: "Not found", message: message) }

    /// An entity ID must be an absolute http(s) URL without query or fragment (section 1.2).
    static func checkEntityID(_ id: String?, parameter: String = "id") throws(ExplorerFailure) -> String {
        guard let id, !id.isEmpty else { throw .badRequest("\(parameter) is required: the entity ID to show, e.g. ?\(parameter)=https://example.org/ta") }
        guard id.utf8.count <= 2048, let c = URLComponents(string: id), let scheme = c.scheme?.lowercased(),
              scheme == "https" || scheme == "http", c.host?.isEmpty == false, c.query == nil, c.fragment == nil
        else { throw .badRequest("\(parameter) is not an entity ID: it must be an absolute http(s) URL without query or fragment") }
        return id
    }

    /// A failure to get a statement: refused by the allow-list (400), not hosted here or not
    /// served (404), a statement that is not acceptable (422), or a host that did not answer
    /// in time or at all (502).
    static func fetching(_ what: String, _ error: FederationError, hosted: Bool) -> ExplorerFailure {
        switch error {
        case .invalidRequest(let m):
            return .init(status: 400, title: "Not allowed", message: "\(what) cannot be fetched: \(m)")
        case .notFound(let m) where hosted || !m.contains("answered HTTP"):
            return .init(status: 404, title: "Not found", message: "\(what): \(m)")
        case .temporarilyUnavailable(let m) where m.contains("larger than"):
            return .init(status: 422, title: "Statement refused", message: "\(what): \(m)")
        case .invalidTrustChain(let m), .invalidMetadata(let m):
            return .init(status: 422, title: "Statement refused", message: "\(what) is not an acceptable entity statement: \(m)")
        default:
            return .init(status: 502, title: "Unreachable", message: "\(what) could not be fetched: \(error.message)")
        }
    }
}
