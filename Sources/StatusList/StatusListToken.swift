import Cryptography
import JOSE
import JSON

/// A Status List Token in JWT form (Token Status List §5.1): `typ: statuslist+jwt`, `sub` = the
/// URI it is served at (the `uri` that Referenced Tokens carry), `iat`, optional `exp` and `ttl`,
/// and `status_list: {bits, lst}`.
public struct StatusListToken: Sendable {
    public static let mediaType = "statuslist+jwt"

    public let subject: String
    public let issuedAt: Int64
    public let expiresAt: Int64?
    /// Seconds a relying party may cache the token before fetching it again (§5.1).
    public let timeToLive: Int64?
    public let list: StatusList

    public init(subject: String, issuedAt: Int64, expiresAt: Int64? = nil, timeToLive: Int64? = nil, list: StatusList) {
        self.subject = subject
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.timeToLive = timeToLive
        self.list = list
    }

    public func claims() throws(StatusListError) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "sub": .string(subject), "iat": .int(issuedAt), "status_list": try list.jsonValue(),
        ]
        if let expiresAt { claims["exp"] = .int(expiresAt) }
        if let timeToLive { claims["ttl"] = .int(timeToLive) }
        return claims
    }

    /// Signs the token; `x5c` (base64 DER, leaf first) goes in the header when given, as HAIP
    /// asks of status list issuers that sign with certified keys.
    public func sign(key: PrivateKey, algorithm: SignatureAlgorithm, keyID: String?, x5c: [String]? = nil) throws(StatusListError) -> String {
        var header: [String: JSONValue] = ["typ": .string(Self.mediaType)]
        if let keyID { header["kid"] = .string(keyID) }
        if let x5c { header["x5c"] = JSONValue(x5c) }
        let payload = JSONValue.object(try claims()).bytes
        do { return try JWS.sign(header: header, payloadBytes: payload, key: key, algorithm: algorithm) } catch {
            throw .signing(error)
        }
    }

    /// Verifies a Status List Token (§8.3): signature by one of `keys`, `typ`, `sub` equal to the
    /// URI the Referenced Token named, not expired; returns the decoded token.
    public static func verify(_ compact: String, keys: JWKSet, expectedSubject: String, now: Int64,
                              allowList: Set<SignatureAlgorithm> = AlgorithmPolicy.federationDefault,
                              maximumBytes: Int = StatusList.defaultMaximumBytes) throws(StatusListError) -> StatusListToken {
        let claims: [String: JSONValue]
        do {
            let (jws, payload) = try JWS.parseClaims(compact)
            try jws.verify(keys: keys, allowList: allowList, expectedType: mediaType, requireKeyID: false)
            claims = payload
        } catch { throw .malformedToken("\(error)") }
        guard let subject = claims["sub"]?.stringValue else { throw .malformedToken("sub missing") }
        guard subject == expectedSubject else { throw .malformedToken("sub \"\(subject)\" is not \"\(expectedSubject)\"") }
        guard let iat = claims["iat"]?.intValue else { throw .malformedToken("iat missing") }
        let exp = claims["exp"]?.intValue
        if let exp, exp <= now { throw .malformedToken("expired") }
        guard let statusList = claims["status_list"], let bits = statusList["bits"]?.intValue,
              let lst = statusList["lst"]?.stringValue else { throw .malformedToken("status_list needs bits and lst") }
        let list = try StatusList(bits: Int(bits), encodedList: lst, maximumBytes: maximumBytes)
        return StatusListToken(subject: subject, issuedAt: iat, expiresAt: exp, timeToLive: claims["ttl"]?.intValue, list: list)
    }
}

/// The `status` claim of a Referenced Token (§6.1): `{"status_list": {"idx": n, "uri": "..."}}`.
public struct StatusReference: Equatable, Sendable {
    public let index: Int
    public let uri: String

    public init(index: Int, uri: String) {
        self.index = index
        self.uri = uri
    }

    public var claim: JSONValue { ["status_list": ["idx": JSONValue(index), "uri": .string(uri)]] }

    /// Reads the reference from a Referenced Token's claims (the value of its `status` member).
    public init(claim: JSONValue) throws(StatusListError) {
        guard let reference = claim["status_list"], let idx = reference["idx"]?.intValue, idx >= 0,
              let uri = reference["uri"]?.stringValue else {
            throw .malformedToken("status.status_list needs a non-negative idx and a uri")
        }
        self.init(index: Int(idx), uri: uri)
    }
}
