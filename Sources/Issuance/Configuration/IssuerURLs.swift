/// Every URL the PID Provider emits, derived from its issuer identifier (the entity ID, which
/// starts with the server's public `--base-url`), never from a request's `Host`: behind TLS on
/// a phone-reachable host, wallets see only the public URL (item 13 of the issuer issue).
public struct IssuerURLs: Sendable, Equatable {
    public let issuer: String

    public init(issuer: String) { self.issuer = issuer }

    public var credentialIssuerMetadata: String { issuer + "/.well-known/openid-credential-issuer" }
    public var authorizationServerMetadata: String { issuer + "/.well-known/oauth-authorization-server" }
    public var jwtVCIssuerMetadata: String { issuer + "/.well-known/jwt-vc-issuer" }
    public var pushedAuthorizationRequest: String { issuer + "/par" }
    public var authorization: String { issuer + "/authorize" }
    /// The mock login page posts the chosen persona here.
    public var login: String { issuer + "/login" }
    public var token: String { issuer + "/token" }
    public var nonce: String { issuer + "/nonce" }
    public var credential: String { issuer + "/credential" }
    public var deferredCredential: String { issuer + "/deferred_credential" }
    public var notification: String { issuer + "/notification" }
    public var iacaCertificate: String { issuer + "/iaca.pem" }
    public var iacaCRL: String { issuer + "/iaca.crl" }
    public var newOffer: String { issuer + "/offers/new" }
    public var adminOffers: String { issuer + "/admin/offers" }
    public var adminCredentials: String { issuer + "/admin/credentials" }

    public func statusList(_ number: Int) -> String { issuer + "/status/\(number)" }
    public func offerPage(_ id: String) -> String { issuer + "/offers/\(id)" }
    /// `credential_offer_uri`: the offer as JSON (OpenID4VCI §4.1.3).
    public func credentialOffer(_ id: String) -> String { issuer + "/offers/\(id)/credential-offer" }
    public func offerQRPNG(_ id: String) -> String { issuer + "/offers/\(id)/qr.png" }
    public func offerQRSVG(_ id: String) -> String { issuer + "/offers/\(id)/qr.svg" }
}
