import Cryptography
import Foundation
@testable import Issuance
import JOSE
import JSON
import OAuth
import Store
import Support
import XCTest

/// Identifiers the issuer stores are made in creation order (a time prefix, then at least 128
/// random bits) so that new rows share the last leaves of each index; values handed out by
/// earlier versions (random from the first byte) keep working.
final class OrderedIdentifierTests: XCTestCase {
    func testOrderedTokensKeepAtLeast128RandomBits() {
        XCTAssertEqual(PIDProvider.orderedToken(bytes: 4).utf8.count, 12 + 22, "never fewer than 128 random bits")
        XCTAssertTrue(PIDProvider.hasOrderedPrefix(PIDProvider.orderedToken(), length: 12 + 43))
    }

    func testStoredValuesAreMadeInCreationOrder() throws {
        let provider = try OAuthFixture.make()
        let offer = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: [OAuthFixture.sdJWT],
                                             grant: .preAuthorizedCode, txCode: false)
        let code = try XCTUnwrap(offer.preAuthorizedCode)
        for value in [offer.id, code] {
            XCTAssertTrue(PIDProvider.hasOrderedPrefix(value, length: value.utf8.count), value)
        }
        let body = try JSONValue.parse(provider.tokenResponse(
            Parameters(pairs: [("grant_type", PIDProvider.preAuthorizedGrantType), ("pre-authorized_code", code)]),
            client: ClientIdentity(clientID: nil, attested: false), dpop: nil))
        let token = try XCTUnwrap(body["access_token"]?.stringValue)
        XCTAssertEqual(token.utf8.count, 55)
        // Stored under its time prefix and the hash of the whole token: nothing a client could present.
        let stored = try XCTUnwrap(provider.database.query("SELECT token_hash FROM issuance_tokens").first?.text("token_hash"))
        XCTAssertEqual(stored, String(token.prefix(12)) + Base64URL.encode(Digest.sha256(Array(token.utf8))))
        XCTAssertFalse(stored.contains(token.dropFirst(12)))
        let request = ResourceRequest(authorization: "Bearer \(token)", dpop: nil, method: "POST", url: provider.urls.credential)
        XCTAssertEqual(try provider.accessGrant(for: request).personaID, "erika")
        // The same token with its prefix changed is another (unknown) token.
        var other = Array(token.utf8)
        other[11] = other[11] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        let forged = ResourceRequest(authorization: "Bearer \(String(decoding: other, as: UTF8.self))", dpop: nil, method: "POST",
                                     url: provider.urls.credential)
        XCTAssertThrowsError(try provider.accessGrant(for: forged)) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidToken)
        }
    }

    func testAccessTokensOfEarlierVersionsStillWork() throws {
        let provider = try OAuthFixture.make()
        let legacy = PIDProvider.randomToken()
        try TokenRepository(database: provider.database).insert(TokenRecord(
            tokenHash: Base64URL.encode(Digest.sha256(Array(legacy.utf8))), issuer: OAuthFixture.issuer, clientID: nil,
            persona: "erika", grant: #"{"credential_configuration_ids":["urn:eudi:pid:1"],"credential_identifiers":{}}"#,
            dpopJKT: nil, issuedAt: OAuthFixture.start, expiresAt: OAuthFixture.start + 600))
        let request = ResourceRequest(authorization: "Bearer \(legacy)", dpop: nil, method: "POST", url: provider.urls.credential)
        XCTAssertEqual(try provider.accessGrant(for: request).credentialConfigurationIDs, [OAuthFixture.sdJWT])
    }

    func testCNoncesStartWithTheirTimeAndEarlierOnesStillWork() throws {
        let clock = ManualClock(OAuthFixture.start)
        let provider = try OAuthFixture.make(clock: clock)
        let a = try provider.issueCNonce(), b = try provider.issueCNonce()
        XCTAssertEqual(a.prefix(10), b.prefix(10), "one second's nonces share their first characters")
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(Array(try XCTUnwrap(Base64URL.decode(a)).prefix(8)),
                       (0..<8).map { UInt8(truncatingIfNeeded: OAuthFixture.start >> (56 - 8 * $0)) })
        // The earlier layout: 16 random bytes, then the time, then the MAC over both.
        let body = SecureRandom.bytes(16) + (0..<8).map { UInt8(truncatingIfNeeded: OAuthFixture.start >> (56 - 8 * $0)) }
        let legacy = Base64URL.encode(body + provider.cNonceMAC(body))
        clock.advance(10)
        XCTAssertTrue(try provider.consumeCNonce(legacy))
        XCTAssertFalse(try provider.consumeCNonce(legacy), "still single use")
        XCTAssertTrue(try provider.consumeCNonce(a))
        clock.advance(provider.configuration.nonceLifetime)
        XCTAssertFalse(try provider.consumeCNonce(b), "expired after nonce_lifetime")
        let stale = SecureRandom.bytes(16) + (0..<8).map { UInt8(truncatingIfNeeded: OAuthFixture.start >> (56 - 8 * $0)) }
        XCTAssertFalse(try provider.consumeCNonce(Base64URL.encode(stale + provider.cNonceMAC(stale))),
                       "an earlier layout's nonce expires too")
    }
}
