import Dispatch
import Foundation
import JOSE
import JSON
import Support

/// Where a resolver gets statements: the entity configuration of an entity ID, and the
/// subordinate statement a superior issues about a subject. Implementations: `RemoteStatementSource`
/// (HTTP, cached), and the host's source (statements hosted here served in-process).
public protocol StatementSource: Sendable {
    func entityConfiguration(of entityID: String, deadline: Deadline) throws(FederationError) -> SourcedStatement
    /// The statement `superior` (its entity configuration, as this source returned it) issues about `subject`.
    func subordinateStatement(superior: SourcedStatement, subject: String, deadline: Deadline) throws(FederationError) -> SourcedStatement
}

/// A decoded statement and whether this process signed it. A statement this server signed was
/// parsed once when signed and needs no signature check: "signed by one of these keys" becomes
/// "one of these keys is the key it was signed with", a comparison instead of an ECDSA verify.
public struct SourcedStatement: Sendable {
    public let statement: EntityStatement
    /// Only for statements signed here: the public key that signed it.
    let signer: JWK?

    /// A statement from elsewhere: every use verifies its signature.
    public init(_ statement: EntityStatement) {
        self.statement = statement
        signer = nil
    }

    init(signedHere statement: EntityStatement, signer: JWK?) {
        self.statement = statement
        self.signer = signer
    }

    public var isTrusted: Bool { signer != nil }

    /// `EntityStatement.verify(with:)`, short-cut for statements signed here whose signing key is
    /// among `keys` (same `kid` and key material, so the signature would verify by construction).
    func verify(with keys: JWKSet) throws(FederationError) {
        if let signer, keys.keys.contains(where: { $0.kid == statement.keyID && $0.hasSameKeyMaterial(as: signer) }) {
            return
        }
        try statement.verify(with: keys)
    }
}

extension JWK {
    /// Same public key, whatever metadata members (`use`, `alg`, `exp`, ...) either carries.
    /// Only the members of the key's type are compared (RFC 7638's required members: a JWK of
    /// a supported type has no others that define the key), rather than all six for every key
    /// a cold resolve compares.
    func hasSameKeyMaterial(as other: JWK) -> Bool {
        // Usually the very same members: the signer's key is taken from the set it is checked
        // against, and dictionaries sharing storage compare equal at once.
        if json == other.json { return true }
        let type = kty
        guard type == other.kty else { return false }
        let members: [String]
        switch type {
        case "EC": members = ["x", "y", "crv"]
        case "OKP": members = ["x", "crv"]
        case "RSA": members = ["n", "e"]
        default: members = ["crv", "x", "y", "n", "e"]
        }
        for member in members where json[member] != other.json[member] { return false }
        return true
    }
}

/// The time a whole resolve may take, carried through every fetch so a slow host cannot stretch
/// it: each fetch gets at most what is left, and waiting for a fetch slot counts too.
public struct Deadline: Sendable {
    /// `DispatchTime` nanoseconds (monotonic), so a wall-clock step cannot stretch the budget.
    let uptimeNanoseconds: UInt64

    public static func after(seconds: Double) -> Deadline {
        let now = DispatchTime.now().uptimeNanoseconds
        let span = seconds <= 0 ? 0 : UInt64(min(seconds, 1e9) * 1e9)
        return Deadline(uptimeNanoseconds: now &+ span < now ? .max : now + span)
    }

    /// No limit (tests, and callers that bound time otherwise).
    public static let distant = Deadline(uptimeNanoseconds: .max)

    /// Seconds left; 0 once passed.
    public var remaining: Double {
        let now = DispatchTime.now().uptimeNanoseconds
        return uptimeNanoseconds > now ? Double(uptimeNanoseconds - now) / 1e9 : 0
    }

    public var hasPassed: Bool { DispatchTime.now().uptimeNanoseconds >= uptimeNanoseconds }

    var dispatchTime: DispatchTime {
        uptimeNanoseconds == .max ? .distantFuture : DispatchTime(uptimeNanoseconds: uptimeNanoseconds)
    }
}

/// URLs of the federation documents of an entity.
enum EntityURL {
    static func configuration(of entityID: String) -> String {
        var base = entityID
        while base.hasSuffix("/") { base.removeLast() }
        return base + wellKnownFederationPath
    }

    /// The superior's advertised fetch endpoint with `sub` (section 8.1.1).
    static func fetch(superior: EntityStatement, subject: String) throws(FederationError) -> String {
        guard let endpoint = superior.metadata?["federation_entity"]?["federation_fetch_endpoint"]?.stringValue else {
            throw .invalidTrustChain("\(superior.subject) publishes no federation_fetch_endpoint")
        }
        return fetch(endpoint: endpoint, subject: subject)
    }

    static func fetch(endpoint: String, subject: String) -> String {
        URLEncoding.appendingQuery([("sub", subject)], to: endpoint)
    }
}
