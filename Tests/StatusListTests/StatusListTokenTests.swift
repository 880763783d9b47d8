import Cryptography
import JOSE
import JSON
import StatusList
import XCTest

final class StatusListTokenTests: XCTestCase {
    func testSignedTokenCarriesClaimsAndVerifies() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let jwk = JWK(publicKey: key.publicKey, algorithm: .ES256)
        var list = try StatusList(bits: 2, size: 64)
        try list.setStatus(.suspended, at: 5)
        let uri = "https://issuer.example/pid-provider/status/1"
        let token = StatusListToken(subject: uri, issuedAt: 1_700_000_000, expiresAt: 1_700_086_400, timeToLive: 43_200, list: list)
        let compact = try token.sign(key: key, algorithm: .ES256, keyID: jwk.kid, x5c: ["MIIB"])

        let (jws, claims) = try JWS.parseClaims(compact)
        XCTAssertEqual(jws.type, "statuslist+jwt")
        XCTAssertEqual(jws.keyID, jwk.kid)
        XCTAssertEqual(jws.header["x5c"], ["MIIB"])
        XCTAssertEqual(claims["sub"], .string(uri))
        XCTAssertEqual(claims["iat"], 1_700_000_000)
        XCTAssertEqual(claims["exp"], 1_700_086_400)
        XCTAssertEqual(claims["ttl"], 43_200)
        XCTAssertEqual(claims["status_list"]?["bits"], 2)

        let keys = JWKSet(keys: [jwk])
        let verified = try StatusListToken.verify(compact, keys: keys, expectedSubject: uri, now: 1_700_000_100)
        XCTAssertEqual(try verified.list.status(at: 5), .suspended)
        XCTAssertEqual(verified.timeToLive, 43_200)

        XCTAssertThrowsError(try StatusListToken.verify(compact, keys: keys, expectedSubject: uri + "x", now: 1_700_000_100))
        XCTAssertThrowsError(try StatusListToken.verify(compact, keys: keys, expectedSubject: uri, now: 1_700_086_400))
        let other = JWKSet(keys: [JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey, algorithm: .ES256)])
        XCTAssertThrowsError(try StatusListToken.verify(compact, keys: other, expectedSubject: uri, now: 1_700_000_100))
    }

    func testOptionalClaimsOmitted() throws {
        let token = StatusListToken(subject: "https://i.example/s", issuedAt: 10, list: try StatusList(bits: 1, size: 8))
        let claims = try token.claims()
        XCTAssertNil(claims["exp"])
        XCTAssertNil(claims["ttl"])
        XCTAssertEqual(claims["status_list"], ["bits": 1, "lst": .string(try StatusList(bits: 1, size: 8).encodedList())])
    }

    func testReferencedTokenClaim() throws {
        let reference = StatusReference(index: 412, uri: "https://i.example/s/1")
        XCTAssertEqual(reference.claim.serialized(), #"{"status_list":{"idx":412,"uri":"https://i.example/s/1"}}"#)
        XCTAssertEqual(try StatusReference(claim: reference.claim), reference)
        XCTAssertThrowsError(try StatusReference(claim: ["status_list": ["idx": -1, "uri": "u"]]))
        XCTAssertThrowsError(try StatusReference(claim: ["status_list": ["uri": "u"]]))
    }

    func testIndexAllocationIsRandomUniqueAndBounded() throws {
        var used: Set<Int> = []
        var order: [Int] = []
        for _ in 0..<200 {
            let index = try StatusList.allocateIndex(size: 100_000, used: used)
            XCTAssertTrue((0..<100_000).contains(index))
            XCTAssertTrue(used.insert(index).inserted)
            order.append(index)
        }
        XCTAssertNotEqual(order, order.sorted(), "indexes must not come out in sequence")
        XCTAssertGreaterThan(order.max()! - order.min()!, 50_000, "indexes must spread over the list")
    }

    func testIndexAllocationOnNearlyFullAndFullLists() throws {
        let size = 1000
        let used = Set(0..<size).subtracting([123, 777])
        for _ in 0..<20 {
            XCTAssertTrue([123, 777].contains(try StatusList.allocateIndex(size: size, used: used)))
        }
        XCTAssertThrowsError(try StatusList.allocateIndex(size: size, used: Set(0..<size))) {
            XCTAssertEqual($0 as? StatusListError, .listFull)
        }
        XCTAssertThrowsError(try StatusList.allocateIndex(size: 0, used: []))
        // Indexes outside the list in `used` do not count against it.
        XCTAssertEqual(try StatusList.allocateIndex(size: 1, used: [5, 9]), 0)
    }
}
