import Cryptography
import JSON
import Store
import Support

/// A credential offer (OpenID4VCI 1.0 §4.1): which persona's PID, which credential
/// configurations, and the one grant it carries. A pre-authorized offer holds its code (and
/// the tx_code the wallet must send with it, §4.1.1); an authorization-code offer holds the
/// `issuer_state` the wallet passes to `/authorize` so the login can be tied back to it.
public struct Offer: Sendable, Equatable {
    public let id: String
    public let personaID: String
    public let credentialConfigurationIDs: [String]
    public let grant: OfferGrant
    public let preAuthorizedCode: String?
    public let txCode: String?
    public let issuerState: String?
    public let createdAt: Int64
    public let expiresAt: Int64

    public init(id: String, personaID: String, credentialConfigurationIDs: [String], grant: OfferGrant,
                preAuthorizedCode: String?, txCode: String?, issuerState: String?, createdAt: Int64, expiresAt: Int64) {
        self.id = id
        self.personaID = personaID
        self.credentialConfigurationIDs = credentialConfigurationIDs
        self.grant = grant
        self.preAuthorizedCode = preAuthorizedCode
        self.txCode = txCode
        self.issuerState = issuerState
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// The grant an offer carries; the raw values are the names the admin API and the page use.
public enum OfferGrant: String, Sendable, CaseIterable {
    case preAuthorizedCode = "pre-authorized_code"
    case authorizationCode = "authorization_code"

    /// The key under `grants` in the offer object (§4.1.1).
    public var grantTypeURI: String {
        switch self {
        case .preAuthorizedCode: "urn:ietf:params:oauth:grant-type:pre-authorized_code"
        case .authorizationCode: "authorization_code"
        }
    }
}

/// What the admin API (and the page, and `trustbed offer`) asks for. Omitted fields take the
/// defaults the README documents: every credential configuration, the pre-authorized code
/// grant (the flow a tester can run by scanning), no tx_code.
public struct OfferRequest: Sendable, Equatable {
    public var personaID: String
    /// nil: every configuration the issuer offers.
    public var credentialConfigurationIDs: [String]?
    public var grant: OfferGrant
    public var txCode: Bool

    public init(personaID: String, credentialConfigurationIDs: [String]? = nil, grant: OfferGrant = .preAuthorizedCode,
                txCode: Bool = false) {
        self.personaID = personaID
        self.credentialConfigurationIDs = credentialConfigurationIDs
        self.grant = grant
        self.txCode = txCode
    }

    /// `{"persona", "credential_configuration_ids"?, "grant"?, "tx_code"?}`; unknown members
    /// are refused, so a typo (`"txcode": true`) does not silently create a different offer.
    private static let allowedMembers: Set<String> = ["persona", "credential_configuration_ids", "grant", "tx_code"]

    public static func parse(_ value: JSONValue) throws(IssuanceError) -> OfferRequest {
        do throws(JSONReadError) {
            let reader = try JSONReader(value)
            try reader.rejectUnknown(allowed: allowedMembers)
            var request = OfferRequest(personaID: try reader.nonEmptyString("persona"))
            request.credentialConfigurationIDs = try reader.optionalStringArray("credential_configuration_ids", nonEmpty: true)
            if let name = try reader.optionalString("grant") {
                guard let grant = OfferGrant(rawValue: name) else {
                    throw reader.invalid("grant", "expected \"pre-authorized_code\" or \"authorization_code\"")
                }
                request.grant = grant
            }
            request.txCode = try reader.optionalBool("tx_code") ?? false
            return request
        } catch {
            throw .invalidRequest("\(error)")
        }
    }
}

extension Offer {
    init(record: OfferRecord) {
        self.init(id: record.id, personaID: record.persona, credentialConfigurationIDs: record.configurationIDs,
                  grant: OfferGrant(rawValue: record.grantType) ?? .preAuthorizedCode,
                  preAuthorizedCode: record.preAuthorizedCode, txCode: record.txCode, issuerState: record.issuerState,
                  createdAt: record.createdAt, expiresAt: record.expiresAt)
    }

    /// A tx_code of `length` decimal digits, each drawn without modulo bias (bytes ≥ 250 are
    /// redrawn), since a biased digit would shorten an attacker's search.
    static func randomTxCode(length: Int) -> [UInt8] {
        var digits: [UInt8] = []
        while digits.count < length {
            for byte in SecureRandom.bytes(length * 2) where byte < 250 && digits.count < length {
                digits.append(UInt8(ascii: "0") + byte % 10)
            }
        }
        return digits
    }
}
