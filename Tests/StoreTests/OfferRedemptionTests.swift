@testable import Store
import XCTest

/// `OfferRepository.redeem(…then:)` runs its follow-up in the redemption's own transaction.
final class OfferRedemptionRepositoryTests: XCTestCase {
    private func offers() throws -> OfferRepository {
        let offers = OfferRepository(database: try Database(path: ":memory:"))
        for (id, tx) in [("plain", nil), ("with-tx", "123456")] as [(String, String?)] {
            try offers.insert(OfferRecord(id: id, issuer: "https://i", persona: "erika", configurationIDs: ["a", "b"],
                                          grantType: "pre-authorized_code", preAuthorizedCode: "code-\(id)", txCode: tx,
                                          issuerState: nil, createdAt: 10, expiresAt: 1000))
        }
        return offers
    }

    func testFollowUpSeesTheRedeemedOfferAndAThrowUndoesTheRedemption() throws {
        let offers = try offers()
        XCTAssertThrowsError(try offers.redeem(issuer: "https://i", preAuthorizedCode: "code-plain", txCode: nil, now: 20,
                                               maxFailures: 5) { offer, _ throws(StoreError) -> Int in
            XCTAssertEqual(offer.redeemedAt, 20)
            XCTAssertEqual(offer.configurationIDs, ["a", "b"])
            throw StoreError.notFound
        })
        // Rolled back: the code is still unredeemed, and the next attempt wins once.
        let first = try offers.redeem(issuer: "https://i", preAuthorizedCode: "code-plain", txCode: nil, now: 21, maxFailures: 5) {
            offer, db throws(StoreError) -> String in
            try db.execute("UPDATE issuance_offers SET persona = 'zoe' WHERE id = ?", [.text(offer.id)])
            return offer.id
        }
        XCTAssertEqual(first.value, "plain")
        guard case .redeemed(let record) = first.redemption else { return XCTFail("not redeemed") }
        XCTAssertEqual(record.redeemedAt, 21)
        XCTAssertEqual(try offers.find(issuer: "https://i", id: "plain", now: 21)?.persona, "zoe", "the follow-up committed with it")
        let again = try offers.redeem(issuer: "https://i", preAuthorizedCode: "code-plain", txCode: nil, now: 22, maxFailures: 5) {
            _, _ throws(StoreError) in XCTFail("no follow-up for a refused code")
        }
        XCTAssertEqual(again.redemption, .alreadyRedeemed)
        XCTAssertNil(again.value)
    }

    func testRefusalsAreReportedInOrderAndAWrongTxCodeIsCounted() throws {
        let offers = try offers()
        func redeem(_ code: String, _ tx: String?, now: Int64 = 20) throws -> PreAuthorizedRedemption {
            try offers.redeem(issuer: "https://i", preAuthorizedCode: code, txCode: tx, now: now, maxFailures: 2)
        }
        XCTAssertEqual(try redeem("nope", nil), .unknown)
        XCTAssertEqual(try redeem("code-plain", "1"), .txCodeUnexpected)
        XCTAssertEqual(try redeem("code-plain", nil, now: 1000), .expired)
        XCTAssertEqual(try redeem("code-with-tx", nil), .txCodeMissing)
        XCTAssertEqual(try redeem("code-with-tx", "000000"), .txCodeWrong(remaining: 1))
        XCTAssertEqual(try redeem("code-with-tx", "000001"), .txCodeWrong(remaining: 0))
        XCTAssertEqual(try redeem("code-with-tx", "123456"), .exhausted)
        XCTAssertEqual(try offers.find(issuer: "https://i", id: "with-tx", now: 20)?.txCodeFailures, 2)
    }
}
