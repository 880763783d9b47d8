import JSON
import Support
@testable import Wallet
import XCTest

/// Credential Offers (OpenID4VCI 1.0 §4.1) and where metadata is looked up (§12.2.2, RFC 8414 §3.1).
final class CredentialOfferTests: XCTestCase {
    static let offer: JSONValue = [
        "credential_issuer": "https://issuer.example/pid",
        "credential_configuration_ids": ["pid-sd-jwt", "pid-mdoc"],
        "grants": [
            "urn:ietf:params:oauth:grant-type:pre-authorized_code": [
                "pre-authorized_code": "code-1", "tx_code": ["input_mode": "numeric", "length": 6],
            ],
            "authorization_code": ["issuer_state": "st-1"],
        ],
    ]

    func testOfferByValueInADeepLink() throws {
        let http = try WalletHTTP(transport: StubTransport { _ in StubTransport.reply(500) })
        let link = "openid-credential-offer://?credential_offer=" + Self.offer.serialized().addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let offer = try CredentialOffer.resolve(link, http: http)
        XCTAssertEqual(offer.credentialIssuer, "https://issuer.example/pid")
        XCTAssertEqual(offer.configurationIDs, ["pid-sd-jwt", "pid-mdoc"])
        XCTAssertEqual(offer.preAuthorized?.code, "code-1")
        XCTAssertEqual(offer.preAuthorized?.txCode?.length, 6)
        XCTAssertEqual(offer.authorizationCode?.issuerState, "st-1")
    }

    func testOfferByReferenceIsFetched() throws {
        let stub = StubTransport { _ in StubTransport.reply(200, Self.offer) }
        let offer = try CredentialOffer.resolve("openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fissuer.example%2Foffers%2F1",
                                                http: try WalletHTTP(transport: stub))
        XCTAssertEqual(offer.preAuthorized?.code, "code-1")
        XCTAssertEqual(stub.requests.map(\.url), ["https://issuer.example/offers/1"])
    }

    func testBadOffersAreRefused() throws {
        let http = try WalletHTTP(transport: StubTransport { _ in StubTransport.reply(404) })
        let both = "openid-credential-offer://?credential_offer=%7B%7D&credential_offer_uri=https%3A%2F%2Fx.example"
        for input in ["not an offer", "{", #"{"credential_issuer":"https://x.example"}"#,
                      #"{"credential_issuer":"https://x.example","credential_configuration_ids":[]}"#,
                      #"{"credential_issuer":"not a url","credential_configuration_ids":["a"]}"#,
                      both, "openid-credential-offer://?nothing=1", "https://x.example/offer"] {
            XCTAssertThrowsError(try CredentialOffer.resolve(input, http: http), input)
        }
    }

    func testWellKnownPlacements() {
        XCTAssertEqual(WellKnown.candidates("https://issuer.example/pid", "openid-credential-issuer"),
                       ["https://issuer.example/.well-known/openid-credential-issuer/pid",
                        "https://issuer.example/pid/.well-known/openid-credential-issuer"])
        XCTAssertEqual(WellKnown.candidates("https://issuer.example/", "oauth-authorization-server"),
                       ["https://issuer.example/.well-known/oauth-authorization-server"])
    }

    /// Missing metadata: the error names every URL tried, both placements and both AS suffixes.
    func testMissingMetadataNamesEveryURLTried() throws {
        let http = try WalletHTTP(transport: StubTransport { _ in StubTransport.reply(404) })
        XCTAssertThrowsError(try IssuerMetadata.fetch("https://issuer.example/pid", http: http)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("https://issuer.example/.well-known/openid-credential-issuer/pid"), text)
            XCTAssertTrue(text.contains("https://issuer.example/pid/.well-known/openid-credential-issuer"), text)
        }
        XCTAssertThrowsError(try AuthorizationServerMetadata.fetch("https://issuer.example/pid", http: http)) { error in
            let text = "\(error)"
            for url in WellKnown.candidates("https://issuer.example/pid", "oauth-authorization-server")
                + WellKnown.candidates("https://issuer.example/pid", "openid-configuration") {
                XCTAssertTrue(text.contains(url), "\(url) missing from: \(text)")
            }
        }
    }

    func testMetadataThatIsNotJSONIsSaidSo() throws {
        let http = try WalletHTTP(transport: StubTransport { _ in WalletHTTP.Reply(status: 200, body: Array("<html>".utf8), headers: .init()) })
        XCTAssertThrowsError(try IssuerMetadata.fetch("https://issuer.example", http: http)) {
            XCTAssertTrue("\($0)".contains("https://issuer.example/.well-known/openid-credential-issuer (HTTP 200, not a JSON object)"), "\($0)")
        }
    }
}
