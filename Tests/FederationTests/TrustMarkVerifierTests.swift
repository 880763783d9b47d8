@testable import Federation
import Support
import JOSE
import JSON
import XCTest

/// Section 7.3: what the resolver keeps of the marks in a subject's configuration.
final class TrustMarkVerifierTests: XCTestCase {
    typealias F = FederationFixture
    let start: Int64 = 1_700_000_000

    private struct Setup {
        let host: FederationHost
        let keys: InMemoryKeys
        let anchor: EntityStatement
    }

    private func setup(_ entities: [HostedEntity]? = nil) throws -> Setup {
        let (host, keys, _) = try F.demo(clock: ManualClock(start), entities: entities)
        return Setup(host: host, keys: keys, anchor: try EntityStatement.decode(host.entityConfiguration(of: F.trustAnchor)))
    }

    private func kept(_ s: Setup, _ jwt: String, type: String = F.basicMark, subject: String = F.pidProvider,
                      at now: Int64? = nil, issuerKeys: ((String) throws(FederationError) -> JWKSet)? = nil) -> [VerifiedTrustMark] {
        let keys = s.keys
        return s.host.verifiedTrustMarks([TrustMarkEntry(trustMarkType: type, trustMark: jwt)], subject: subject, trustAnchor: s.anchor,
                                         issuer: { id throws(FederationError) in
                                             if let issuerKeys { return TrustMarkIssuerTrust(keys: try issuerKeys(id)) }
                                             return TrustMarkIssuerTrust(keys: try keys.publicKeys(for: id))
                                         }, status: TrustMarkStatusChecker(client: nil), now: now ?? start).marks
    }

    private func mark(_ s: Setup, by issuer: String, _ changes: [String: JSONValue] = [:], typ: String = "trust-mark+jwt") throws -> String {
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "sub": .string(F.pidProvider), "trust_mark_type": .string(F.basicMark),
            "iat": .int(start), "exp": .int(start + 600),
        ]
        claims.merge(changes) { $1 }
        return try s.keys.signingKey(for: issuer).sign(claims, type: typ)
    }

    func testIssuedMarkIsKeptWithItsExpiry() throws {
        let s = try setup()
        let jwt = try s.host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        let result = kept(s, jwt)
        XCTAssertEqual(result.map(\.entry.trustMark), [jwt])
        XCTAssertEqual(result.first?.expiresAt, start + 86_400)
    }

    func testMarkWithoutExpIsKeptWithoutExpiry() throws {
        let s = try setup()
        var claims = try F.decode(try mark(s, by: F.trustAnchor)).claims
        claims["exp"] = nil
        let jwt = try s.keys.signingKey(for: F.trustAnchor).sign(claims, type: "trust-mark+jwt")
        let result = kept(s, jwt)
        XCTAssertEqual(result.count, 1)
        XCTAssertNil(result.first?.expiresAt ?? nil)
    }

    func testIssuerNotInTrustMarkIssuersIsDropped() throws {
        let s = try setup()
        XCTAssertEqual(kept(s, try mark(s, by: F.intermediate)).count, 0)
    }

    func testTypeTheAnchorDoesNotListIsDropped() throws {
        let s = try setup()
        let other = F.base + "/marks/other"
        XCTAssertEqual(kept(s, try mark(s, by: F.trustAnchor, ["trust_mark_type": .string(other)]), type: other).count, 0)
    }

    func testEmptyIssuerListLetsAnyoneIssue() throws {
        let s = try setup([F.trustAnchorEntity(trustMarkIssuers: [F.basicMark: []]), F.intermediateEntity(), F.pidProviderEntity])
        XCTAssertEqual(kept(s, try mark(s, by: F.intermediate)).count, 1)
    }

    /// Section 7: an issuer is accepted by the federation through the anchor's trust_mark_issuers,
    /// so an anchor that publishes none accepts no issuer, not every issuer.
    func testAnchorWithoutTrustMarkIssuersAcceptsNobody() throws {
        let s = try setup([F.trustAnchorEntity(trustMarkIssuers: [:]), F.intermediateEntity(), F.pidProviderEntity])
        XCTAssertNil(s.anchor.claims["trust_mark_issuers"])
        XCTAssertEqual(kept(s, try mark(s, by: F.intermediate)).count, 0)
        XCTAssertEqual(kept(s, try mark(s, by: F.trustAnchor)).count, 0, "not even the anchor itself")
    }

    func testWrongSubjectOrTypeIsDropped() throws {
        let s = try setup()
        let jwt = try s.host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        XCTAssertEqual(kept(s, jwt, subject: F.relyingParty).count, 0)
        XCTAssertEqual(kept(s, jwt, type: F.base + "/marks/other").count, 0, "entry type must match the mark's")
    }

    func testExpiredOrFutureMarkIsDropped() throws {
        let s = try setup()
        let jwt = try mark(s, by: F.trustAnchor)
        XCTAssertEqual(kept(s, jwt, at: start + 599).count, 1)
        XCTAssertEqual(kept(s, jwt, at: start + 600).count, 0)
        XCTAssertEqual(kept(s, try mark(s, by: F.trustAnchor, ["iat": .int(start + 3_600), "exp": .int(start + 7_200)])).count, 0)
    }

    func testBadSignatureOrTypIsDropped() throws {
        let s = try setup()
        let jwt = try s.host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        XCTAssertEqual(kept(s, try F.tampered(jwt) { $0["exp"] = .int(self.start + 999_999) }).count, 0)
        XCTAssertEqual(kept(s, jwt, issuerKeys: { _ throws(FederationError) in try s.keys.publicKeys(for: F.relyingParty) }).count, 0)
        XCTAssertEqual(kept(s, try mark(s, by: F.trustAnchor, typ: "entity-statement+jwt")).count, 0)
        XCTAssertEqual(kept(s, "garbage").count, 0)
    }

    func testIssuerWithoutTrustChainIsDropped() throws {
        let s = try setup()
        let jwt = try s.host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        XCTAssertEqual(kept(s, jwt, issuerKeys: { _ throws(FederationError) in throw .invalidTrustChain("no chain") }).count, 0)
    }
}
