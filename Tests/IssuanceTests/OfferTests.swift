import Foundation
import Issuance
import JSON
import Logging
import Store
import Support
import XCTest

/// A PID Provider on an in-memory database and a manual clock, for the offer tests. The keys
/// are made once per process (a temporary folder), since every test only needs some.
enum OfferTestProvider {
    static let issuer = "https://issuer.example/pid-provider"
    static let start: Int64 = 1_750_000_000

    private static let keys: IssuerKeys = {
        let dir = NSTemporaryDirectory() + "trustbed-offer-tests-\(getpid())"
        return try! IssuerKeys.loadOrCreate(directory: dir, issuer: issuer, country: "NL", authority: "Test", now: start)
    }()

    static let personas = [
        Persona(id: "erika", personalAdministrativeNumber: "1",
                claims: ["given_name": "Erika", "family_name": "Mustermann", "birthdate": "1984-01-26"]),
        Persona(id: "evil", personalAdministrativeNumber: "2",
                claims: ["given_name": "<script>alert(1)</script>", "family_name": "O'Brien & \"Co\"", "birthdate": "1990-01-01"]),
        Persona(id: "zoe", personalAdministrativeNumber: "3",
                claims: ["given_name": "Zoë", "family_name": "Ðorđević", "birthdate": "2010-05-05"]),
    ]

    static func make(issuer: String = issuer, clock: ManualClock = ManualClock(start), adminToken: String = "admin-secret",
                     database: Database? = nil) throws -> PIDProvider {
        var configuration = IssuerConfiguration(
            credentialConfigurations: [
                CredentialConfiguration(id: "eu.europa.ec.eudi.pid.1", format: .mdoc, type: "eu.europa.ec.eudi.pid.1",
                                        scope: "eu.europa.ec.eudi.pid.1"),
                CredentialConfiguration(id: "urn:eudi:pid:1", format: .sdJWT, type: "urn:eudi:pid:1", scope: "urn:eudi:pid:1",
                                        display: [["name": "PID <SD-JWT>", "locale": "en"]]),
            ],
            personas: personas)
        configuration.offerLifetime = 600
        return PIDProvider(
            issuer: issuer, entityName: "pid-provider", configuration: configuration, keys: keys,
            database: try database ?? Database(path: ":memory:"), clock: clock, logger: Logger(label: "offer-tests"),
            trustAnchors: [], attestationRoots: [], walletProviderTrust: nil, adminToken: adminToken)
    }
}

final class OfferTests: XCTestCase {
    func testHousekeepingDeletesOnlyExpiredRows() throws {
        let clock = ManualClock(OfferTestProvider.start)
        let provider = try OfferTestProvider.make(clock: clock)
        _ = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: ["urn:eudi:pid:1"], grant: .preAuthorizedCode,
                                     txCode: false)
        // A c_nonce is stateless until used; its use is recorded until the nonce expires.
        let nonce = try provider.issueCNonce()
        XCTAssertTrue(try provider.consumeCNonce(nonce))
        XCTAssertEqual(try provider.purgeExpired(), 0, "nothing has expired yet")
        clock.advance(601)
        XCTAssertEqual(try provider.purgeExpired(), 2, "the offer (600 s) and the c_nonce's use (300 s) are gone")
        XCTAssertEqual(try provider.database.query("SELECT count(*) AS n FROM issuance_offers").first?.int("n"), 0)
        XCTAssertFalse(try provider.consumeCNonce(nonce), "expired, so refused although its use record is gone")
    }

    func testPreAuthorizedOfferJSONShape() throws {
        let provider = try OfferTestProvider.make()
        let offer = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: ["urn:eudi:pid:1"],
                                             grant: .preAuthorizedCode, txCode: true)
        XCTAssertEqual(offer.expiresAt, OfferTestProvider.start + 600)
        let tx = try XCTUnwrap(offer.txCode)
        XCTAssertEqual(tx.count, 6)
        XCTAssertTrue(tx.allSatisfy(\.isASCII) && tx.allSatisfy(\.isNumber))
        let json = try JSONValue.parse(provider.credentialOfferBody(offer))
        XCTAssertEqual(json["credential_issuer"], .string(OfferTestProvider.issuer))
        XCTAssertEqual(json["credential_configuration_ids"], ["urn:eudi:pid:1"])
        let grants = try XCTUnwrap(json["grants"]?.objectValue)
        XCTAssertEqual(Array(grants.keys), ["urn:ietf:params:oauth:grant-type:pre-authorized_code"])
        let grant = try XCTUnwrap(grants["urn:ietf:params:oauth:grant-type:pre-authorized_code"])
        XCTAssertEqual(grant["pre-authorized_code"], offer.preAuthorizedCode.map(JSONValue.string))
        XCTAssertEqual(grant["tx_code"]?["length"], 6)
        XCTAssertEqual(grant["tx_code"]?["input_mode"], "numeric")
        XCTAssertNotNil(grant["tx_code"]?["description"]?.stringValue)
        XCTAssertNil(grant["issuer_state"])

        let plain = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: ["urn:eudi:pid:1"],
                                             grant: .preAuthorizedCode, txCode: false)
        XCTAssertNil(try JSONValue.parse(provider.credentialOfferBody(plain))["grants"]?["urn:ietf:params:oauth:grant-type:pre-authorized_code"]?["tx_code"])
    }

    func testAuthorizationCodeOfferCarriesIssuerState() throws {
        let provider = try OfferTestProvider.make()
        let offer = try provider.createOffer(personaID: "zoe", credentialConfigurationIDs: ["eu.europa.ec.eudi.pid.1", "urn:eudi:pid:1"],
                                             grant: .authorizationCode, txCode: false)
        XCTAssertNil(offer.preAuthorizedCode)
        let state = try XCTUnwrap(offer.issuerState)
        let json = try JSONValue.parse(provider.credentialOfferBody(offer))
        XCTAssertEqual(json["grants"], ["authorization_code": ["issuer_state": .string(state)]])
        XCTAssertEqual(try provider.offer(issuerState: state), offer)
        XCTAssertNil(try provider.offer(issuerState: "nope"))
    }

    func testRefusesUnknownPersonaConfigurationAndBadLists() throws {
        let provider = try OfferTestProvider.make()
        func code(_ body: () throws -> Offer) -> IssuanceError.Code? {
            do { _ = try body(); return nil } catch { return (error as? IssuanceError)?.codeValue }
        }
        XCTAssertEqual(code { try provider.createOffer(personaID: "nobody", credentialConfigurationIDs: ["urn:eudi:pid:1"], grant: .preAuthorizedCode, txCode: false) }, .invalidRequest)
        XCTAssertEqual(code { try provider.createOffer(personaID: "erika", credentialConfigurationIDs: ["x"], grant: .preAuthorizedCode, txCode: false) }, .invalidRequest)
        XCTAssertEqual(code { try provider.createOffer(personaID: "erika", credentialConfigurationIDs: [], grant: .preAuthorizedCode, txCode: false) }, .invalidRequest)
        XCTAssertEqual(code { try provider.createOffer(personaID: "erika", credentialConfigurationIDs: ["urn:eudi:pid:1", "urn:eudi:pid:1"], grant: .preAuthorizedCode, txCode: false) }, .invalidRequest)
        XCTAssertEqual(code { try provider.createOffer(personaID: "erika", credentialConfigurationIDs: ["urn:eudi:pid:1"], grant: .authorizationCode, txCode: true) }, .invalidRequest)
    }

    func testRequestDefaultsAndStrictParsing() throws {
        let provider = try OfferTestProvider.make()
        let request = try OfferRequest.parse(JSONValue.parse(#"{"persona": "erika"}"#))
        XCTAssertEqual(request, OfferRequest(personaID: "erika"))
        let offer = try provider.createOffer(request)
        XCTAssertEqual(offer.credentialConfigurationIDs, ["eu.europa.ec.eudi.pid.1", "urn:eudi:pid:1"])
        XCTAssertEqual(offer.grant, .preAuthorizedCode)
        XCTAssertNil(offer.txCode)
        for bad in [#"{"persona": "erika", "txcode": true}"#, #"{"persona": "erika", "grant": "implicit"}"#, #"{}"#,
                    #"{"persona": "erika", "credential_configuration_ids": []}"#, #"{"persona": 1}"#] {
            XCTAssertThrowsError(try OfferRequest.parse(JSONValue.parse(bad)), bad) { error in
                XCTAssertEqual((error as? IssuanceError)?.codeValue, .invalidRequest, bad)
            }
        }
    }

    func testLookupExpiresWithTheClock() throws {
        let clock = ManualClock(OfferTestProvider.start)
        let provider = try OfferTestProvider.make(clock: clock)
        let offer = try provider.createOffer(OfferRequest(personaID: "erika"))
        XCTAssertEqual(try provider.offer(id: offer.id), offer)
        XCTAssertNil(try provider.offer(id: "unknown"))
        clock.advance(599)
        XCTAssertNotNil(try provider.offer(id: offer.id))
        clock.advance(1)
        XCTAssertNil(try provider.offer(id: offer.id))
    }

    /// The admin API's 201 body for every kind of offer: the offer object, its URLs, the
    /// tx_code when there is one; members sorted, escapes as the writer makes them.
    func testOfferCreatedBodyContent() throws {
        let provider = try OfferTestProvider.make()
        let offers = [
            try provider.createOffer(personaID: "erika", credentialConfigurationIDs: ["urn:eudi:pid:1"], grant: .preAuthorizedCode,
                                     txCode: true),
            try provider.createOffer(personaID: "erika", credentialConfigurationIDs: ["urn:eudi:pid:1"], grant: .preAuthorizedCode,
                                     txCode: false),
            try provider.createOffer(personaID: "zoe", credentialConfigurationIDs: ["eu.europa.ec.eudi.pid.1", "urn:eudi:pid:1"],
                                     grant: .authorizationCode, txCode: false),
            // A value that needs escapes.
            Offer(id: "a\"b\\c\u{1}", personaID: "erika", credentialConfigurationIDs: ["x\ny", "é"], grant: .preAuthorizedCode,
                  preAuthorizedCode: "p\"q", txCode: "123456", issuerState: nil, createdAt: 1, expiresAt: 2),
        ]
        for offer in offers {
            let bytes = provider.offerCreatedBody(offer)
            let body = try JSONValue.parse(bytes)
            var expected: [String: JSONValue] = [
                "offer_id": .string(offer.id),
                "credential_offer": try JSONValue.parse(provider.credentialOfferBody(offer)),
                "credential_offer_uri": .string(provider.urls.credentialOffer(offer.id)),
                "offer_url": .string(provider.offerURL(offer)),
                "offer_url_by_value": .string(provider.offerURL(offer, byValue: true)),
                "qr_png": .string(provider.urls.offerQRPNG(offer.id)),
                "qr_svg": .string(provider.urls.offerQRSVG(offer.id)),
                "offer_page": .string(provider.urls.offerPage(offer.id)),
                "expires_at": .int(offer.expiresAt),
            ]
            if let tx = offer.txCode { expected["tx_code"] = .string(tx) }
            XCTAssertEqual(body, .object(expected))
            XCTAssertEqual(bytes, body.bytes, "members sorted")
            let credentialOffer = provider.credentialOfferBody(offer)
            XCTAssertEqual(credentialOffer, try JSONValue.parse(credentialOffer).bytes, "members sorted")
            XCTAssertEqual(try JSONValue.parse(credentialOffer)["credential_configuration_ids"], JSONValue(offer.credentialConfigurationIDs))
        }
    }

    func testOfferURLByReferenceAndByValue() throws {
        let provider = try OfferTestProvider.make()
        let offer = try provider.createOffer(OfferRequest(personaID: "erika"))
        XCTAssertEqual(provider.offerURL(offer), "openid-credential-offer://?credential_offer_uri="
                       + URLEncoding.encode(OfferTestProvider.issuer + "/offers/\(offer.id)/credential-offer"))
        let byValue = provider.offerURL(offer, byValue: true)
        let query = try XCTUnwrap(byValue.split(separator: "?", maxSplits: 1).last)
        let value = try Parameters(encoded: String(query)).single("credential_offer")
        XCTAssertEqual(try JSONValue.parse(value), try JSONValue.parse(provider.credentialOfferBody(offer)))
        XCTAssertEqual(byValue, URLEncoding.appendingQuery([("credential_offer", String(decoding: provider.credentialOfferBody(offer), as: UTF8.self))],
                                                           to: "openid-credential-offer://"))
    }
}

final class OfferRedemptionTests: XCTestCase {
    private func redeemError(_ provider: PIDProvider, _ code: String, _ tx: String?) -> IssuanceError? {
        do { _ = try provider.redeemPreAuthorizedCode(code, txCode: tx); return nil } catch { return error }
    }

    func testUnknownExpiredAndReplay() throws {
        let clock = ManualClock(OfferTestProvider.start)
        let provider = try OfferTestProvider.make(clock: clock)
        XCTAssertEqual(redeemError(provider, "unknown", nil)?.codeValue, .invalidGrant)
        let offer = try provider.createOffer(OfferRequest(personaID: "erika"))
        let code = try XCTUnwrap(offer.preAuthorizedCode)
        XCTAssertEqual(try provider.redeemPreAuthorizedCode(code, txCode: nil), offer)
        XCTAssertEqual(redeemError(provider, code, nil)?.codeValue, .invalidGrant, "a replay")

        let late = try provider.createOffer(OfferRequest(personaID: "erika"))
        clock.advance(600)
        XCTAssertEqual(redeemError(provider, try XCTUnwrap(late.preAuthorizedCode), nil)?.codeValue, .invalidGrant)
    }

    func testTxCodeRules() throws {
        let provider = try OfferTestProvider.make()
        let offer = try provider.createOffer(OfferRequest(personaID: "erika", txCode: true))
        let code = try XCTUnwrap(offer.preAuthorizedCode), tx = try XCTUnwrap(offer.txCode)
        // §6.3: a missing tx_code is invalid_request and costs no attempt.
        XCTAssertEqual(redeemError(provider, code, nil)?.codeValue, .invalidRequest)
        let wrong = tx == "000000" ? "111111" : "000000"
        for _ in 0..<4 { XCTAssertEqual(redeemError(provider, code, wrong)?.codeValue, .invalidGrant) }
        XCTAssertEqual(try provider.redeemPreAuthorizedCode(code, txCode: tx).id, offer.id, "4 failures leave the code alive")

        let plain = try provider.createOffer(OfferRequest(personaID: "erika"))
        XCTAssertEqual(redeemError(provider, try XCTUnwrap(plain.preAuthorizedCode), "123456")?.codeValue, .invalidRequest)
    }

    func testFiveWrongTxCodesKillTheCode() throws {
        let provider = try OfferTestProvider.make()
        let offer = try provider.createOffer(OfferRequest(personaID: "erika", txCode: true))
        let code = try XCTUnwrap(offer.preAuthorizedCode), tx = try XCTUnwrap(offer.txCode)
        let wrong = tx == "999999" ? "888888" : "999999"
        for _ in 0..<5 { XCTAssertEqual(redeemError(provider, code, wrong)?.codeValue, .invalidGrant) }
        let error = redeemError(provider, code, tx)
        XCTAssertEqual(error?.codeValue, .invalidGrant)
        XCTAssertTrue(error?.description.contains("too many") == true, "\(String(describing: error))")
    }

    func testFiftyConcurrentRedemptionsHaveOneWinner() throws {
        let provider = try OfferTestProvider.make()
        let offer = try provider.createOffer(OfferRequest(personaID: "erika", txCode: true))
        let code = try XCTUnwrap(offer.preAuthorizedCode), tx = offer.txCode
        let wins = Locked(0), refusals = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            do {
                _ = try provider.redeemPreAuthorizedCode(code, txCode: tx)
                wins.withLock { $0 += 1 }
            } catch {
                if (error as? IssuanceError)?.codeValue == .invalidGrant { refusals.withLock { $0 += 1 } }
            }
        }
        XCTAssertEqual(wins.current, 1)
        XCTAssertEqual(refusals.current, 49)
    }

    func testRedemptionSurvivesARestart() throws {
        let path = NSTemporaryDirectory() + "offer-restart-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let first = try OfferTestProvider.make(database: Database(path: path))
        let offer = try first.createOffer(OfferRequest(personaID: "erika"))
        _ = try first.redeemPreAuthorizedCode(try XCTUnwrap(offer.preAuthorizedCode), txCode: nil)
        first.database.close()
        let second = try OfferTestProvider.make(database: Database(path: path))
        XCTAssertEqual(try second.offer(id: offer.id), offer)
        XCTAssertEqual(redeemError(second, try XCTUnwrap(offer.preAuthorizedCode), nil)?.codeValue, .invalidGrant)
    }
}
