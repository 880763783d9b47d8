import Cryptography
import JSON
import Support

/// A pushed authorization request (RFC 9126 §2.1) after validation: what the login completes
/// and the authorization code carries to the token endpoint. Stored as JSON in
/// `issuance_authorization_requests.parameters` and `issuance_codes.grant`.
public struct AuthorizationRequest: Sendable, Equatable {
    public var clientID: String
    public var attested: Bool
    public var redirectURI: String
    /// RFC 7636 S256 challenge (base64url of a SHA-256, 43 characters).
    public var codeChallenge: String
    public var state: String?
    /// The credential configurations asked for, by `scope` or `authorization_details`.
    public var credentialConfigurationIDs: [String]
    /// True when they were asked for by `authorization_details`: the token response then
    /// carries `authorization_details` with `credential_identifiers` (OpenID4VCI §6.2).
    public var usesAuthorizationDetails: Bool
    public var loginHint: String?
    /// The persona of the authorization-code offer whose `issuer_state` came with the request.
    public var offerPersonaID: String?
    /// RFC 9449 §10: the DPoP key the code is bound to (`dpop_jkt`, or the PAR's DPoP proof).
    public var dpopJKT: String?
    /// Set once the person logged in (in the code's copy).
    public var personaID: String?

    var json: JSONValue {
        var object: [String: JSONValue] = [
            "client_id": .string(clientID), "attested": .bool(attested), "redirect_uri": .string(redirectURI),
            "code_challenge": .string(codeChallenge), "configuration_ids": JSONValue(credentialConfigurationIDs),
            "authorization_details": .bool(usesAuthorizationDetails),
        ]
        if let state { object["state"] = .string(state) }
        if let loginHint { object["login_hint"] = .string(loginHint) }
        if let offerPersonaID { object["offer_persona"] = .string(offerPersonaID) }
        if let dpopJKT { object["dpop_jkt"] = .string(dpopJKT) }
        if let personaID { object["persona"] = .string(personaID) }
        return .object(object)
    }

    /// Reads our own stored JSON; a row we cannot read is a server error, not the client's.
    init(json text: String) throws(IssuanceError) {
        guard let value = try? JSONValue.parse(text), let clientID = value["client_id"]?.stringValue,
              let redirectURI = value["redirect_uri"]?.stringValue, let challenge = value["code_challenge"]?.stringValue,
              let ids = value["configuration_ids"]?.stringArray else {
            throw .serverError("a stored authorization request is unreadable")
        }
        self.clientID = clientID
        self.attested = value["attested"]?.boolValue ?? false
        self.redirectURI = redirectURI
        self.codeChallenge = challenge
        self.state = value["state"]?.stringValue
        self.credentialConfigurationIDs = ids
        self.usesAuthorizationDetails = value["authorization_details"]?.boolValue ?? false
        self.loginHint = value["login_hint"]?.stringValue
        self.offerPersonaID = value["offer_persona"]?.stringValue
        self.dpopJKT = value["dpop_jkt"]?.stringValue
        self.personaID = value["persona"]?.stringValue
    }

    init(clientID: String, attested: Bool, redirectURI: String, codeChallenge: String, state: String?,
         credentialConfigurationIDs: [String], usesAuthorizationDetails: Bool, loginHint: String?, offerPersonaID: String?,
         dpopJKT: String?) {
        self.clientID = clientID
        self.attested = attested
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.state = state
        self.credentialConfigurationIDs = credentialConfigurationIDs
        self.usesAuthorizationDetails = usesAuthorizationDetails
        self.loginHint = loginHint
        self.offerPersonaID = offerPersonaID
        self.dpopJKT = dpopJKT
    }
}

extension PIDProvider {
    /// The configurations `scope` (space-separated, RFC 6749 §3.3) names. Scopes this issuer
    /// does not know (e.g. `openid`) are ignored, as §3.3 allows.
    func configurationIDs(scope: String) -> [String] {
        var ids: [String] = []
        for item in scope.split(separator: " ") {
            for c in configuration.credentialConfigurations where c.scope == item && !ids.contains(c.id) { ids.append(c.id) }
        }
        return ids
    }

    /// `authorization_details` (RFC 9396, OpenID4VCI §5.1.1): a JSON array of objects with
    /// `type` `openid_credential` and a known `credential_configuration_id`. The members we
    /// know are checked (`claims` a non-empty array of claims description objects, Appendix
    /// B.1, though the whole PID is issued regardless; `locations` naming this issuer); any
    /// other member is ignored, as §5.1.1 requires of an issuer that does not understand it.
    /// Returns the configuration ids, in order, without repeats.
    func configurationIDs(authorizationDetails text: String) throws(IssuanceError) -> [String] {
        func refuse(_ why: String) -> IssuanceError { IssuanceError(.invalidAuthorizationDetails, why) }
        guard let value = try? JSONValue.parse(text), let items = value.arrayValue, !items.isEmpty else {
            throw refuse("authorization_details must be a non-empty JSON array")
        }
        var ids: [String] = []
        for (index, item) in items.enumerated() {
            guard let object = item.objectValue else { throw refuse("authorization_details[\(index)] must be an object") }
            guard object["type"]?.stringValue == "openid_credential" else {
                throw refuse("authorization_details[\(index)].type must be openid_credential")
            }
            guard let id = object["credential_configuration_id"]?.stringValue else {
                throw refuse("authorization_details[\(index)].credential_configuration_id is required")
            }
            guard configuration.configuration(id: id) != nil else {
                throw refuse("unknown credential_configuration_id \(id)")
            }
            if let claims = object["claims"], let problem = Self.claimsDescriptionProblem(claims) {
                throw refuse("authorization_details[\(index)].claims \(problem)")
            }
            if let locations = object["locations"] {
                guard locations.stringArray?.contains(issuer) == true else {
                    throw refuse("authorization_details[\(index)].locations must name \(issuer)")
                }
            }
            if !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    /// Why `claims` is not a non-empty array of claims description objects (OpenID4VCI
    /// Appendix B.1: `path` a non-empty array of strings, nulls and non-negative integers;
    /// `mandatory` a boolean), or nil when it is. Other members of a description are ignored.
    static func claimsDescriptionProblem(_ claims: JSONValue) -> String? {
        guard let items = claims.arrayValue, !items.isEmpty else { return "must be a non-empty array" }
        for (index, item) in items.enumerated() {
            guard let object = item.objectValue else { return "[\(index)] must be an object" }
            guard let path = object["path"]?.arrayValue, !path.isEmpty else { return "[\(index)].path must be a non-empty array" }
            for component in path {
                switch component {
                case .string, .null: continue
                case .int(let n) where n >= 0: continue
                default: return "[\(index)].path holds only strings, null and non-negative integers"
                }
            }
            if let mandatory = object["mandatory"], mandatory.boolValue == nil { return "[\(index)].mandatory must be a boolean" }
        }
        return nil
    }

}
