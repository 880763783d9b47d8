@testable import Federation
import Support
import JOSE
import JSON
import XCTest

/// Marks of a type whose owner the Trust Anchor names (sections 7.2 and 7.3 step 8).
final class TrustMarkDelegationTests: XCTestCase {
    typealias F = FederationFixture
    static let delegatedMark = F.base + "/marks/delegated"
    let start: Int64 = 1_700_000_000

    /// The anchor owns `delegatedMark` and lets the intermediate issue it to the relying party.
    static func delegatingFederation(owner: String = F.trustAnchor) -> [HostedEntity] {
        [
            F.trustAnchorEntity(trustMarkIssuers: [F.basicMark: [F.trustAnchor], delegatedMark: [F.intermediate]],
                                trustMarkOwners: [delegatedMark: owner]),
            F.intermediateEntity(trustMarksIssued: [TrustMarkIssuance(trustMarkType: delegatedMark, subjects: [F.relyingParty])]),
            F.pidProviderEntity, F.relyingPartyEntity,
        ]
    }

    func testDelegationIsIssuedByTheOwnerAndVerifies() throws {
        let (host, keys, _) = try F.demo(clock: ManualClock(start), entities: Self.delegatingFederation())
        let mark = try host.trustMark(issuer: F.intermediate, type: Self.delegatedMark, subject: F.relyingParty)
        let claims = try F.decode(mark).claims
        let delegation = try XCTUnwrap(claims["delegation"]?.stringValue)
        let (jws, d) = try F.decode(delegation)
        XCTAssertEqual(jws.type, "trust-mark-delegation+jwt")
        XCTAssertEqual(jws.keyID, try keys.signingKey(for: F.trustAnchor).kid)
        XCTAssertEqual(d["iss"], .string(F.trustAnchor))
        XCTAssertEqual(d["sub"], .string(F.intermediate))
        XCTAssertEqual(d["trust_mark_type"], .string(Self.delegatedMark))
        XCTAssertEqual(d["iat"], .int(start))
        XCTAssertEqual(d["exp"], claims["exp"])
        XCTAssertNoThrow(try jws.verify(keys: keys.publicKeys(for: F.trustAnchor), allowList: AlgorithmPolicy.federationDefault,
                                        expectedType: "trust-mark-delegation+jwt"))

        let anchor = try EntityStatement.decode(host.entityConfiguration(of: F.trustAnchor))
        XCTAssertNotNil(anchor.claims["trust_mark_owners"]?[Self.delegatedMark]?["jwks"])
        let verified = host.verifiedTrustMarks(host.trustMarkEntries(for: F.relyingParty), subject: F.relyingParty, trustAnchor: anchor,
                                               issuer: { id throws(FederationError) in TrustMarkIssuerTrust(keys: try keys.publicKeys(for: id)) },
                                               status: TrustMarkStatusChecker(client: nil), now: start).marks
        XCTAssertEqual(verified.map(\.entry.trustMark), [mark])
        XCTAssertEqual(verified.first?.expiresAt, claims["exp"]?.intValue)
    }

    func testMarkWithoutOrWithForgedDelegationIsDropped() throws {
        let (host, keys, _) = try F.demo(clock: ManualClock(start), entities: Self.delegatingFederation())
        let anchor = try EntityStatement.decode(host.entityConfiguration(of: F.trustAnchor))
        let claims: [String: JSONValue] = [
            "iss": .string(F.intermediate), "sub": .string(F.relyingParty), "trust_mark_type": .string(Self.delegatedMark),
            "iat": .int(start), "exp": .int(start + 600),
        ]
        let verify = { (jwt: String) in
            host.verifiedTrustMarks([TrustMarkEntry(trustMarkType: Self.delegatedMark, trustMark: jwt)], subject: F.relyingParty,
                                    trustAnchor: anchor, issuer: { id throws(FederationError) in TrustMarkIssuerTrust(keys: try keys.publicKeys(for: id)) },
                                    status: TrustMarkStatusChecker(client: nil), now: self.start).marks
        }
        let intermediateKey = try keys.signingKey(for: F.intermediate)
        XCTAssertEqual(verify(try intermediateKey.sign(claims, type: "trust-mark+jwt")).count, 0, "owned type without delegation")

        // A delegation the issuer signed for itself instead of the owner.
        let selfDelegation = try intermediateKey.sign([
            "iss": .string(F.trustAnchor), "sub": .string(F.intermediate), "trust_mark_type": .string(Self.delegatedMark),
            "iat": .int(start), "exp": .int(start + 600),
        ], type: "trust-mark-delegation+jwt")
        var forged = claims
        forged["delegation"] = .string(selfDelegation)
        XCTAssertEqual(verify(try intermediateKey.sign(forged, type: "trust-mark+jwt")).count, 0)

        // A genuine delegation, but for another issuer.
        let otherIssuer = try keys.signingKey(for: F.trustAnchor).sign([
            "iss": .string(F.trustAnchor), "sub": .string(F.pidProvider), "trust_mark_type": .string(Self.delegatedMark),
            "iat": .int(start), "exp": .int(start + 600),
        ], type: "trust-mark-delegation+jwt")
        forged["delegation"] = .string(otherIssuer)
        XCTAssertEqual(verify(try intermediateKey.sign(forged, type: "trust-mark+jwt")).count, 0)

        // An expired delegation.
        let expired = try keys.signingKey(for: F.trustAnchor).sign([
            "iss": .string(F.trustAnchor), "sub": .string(F.intermediate), "trust_mark_type": .string(Self.delegatedMark),
            "iat": .int(start - 600), "exp": .int(start),
        ], type: "trust-mark-delegation+jwt")
        forged["delegation"] = .string(expired)
        XCTAssertEqual(verify(try intermediateKey.sign(forged, type: "trust-mark+jwt")).count, 0)
    }

    func testOwnerNotHostedHereCannotSignTheDelegation() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start), entities: Self.delegatingFederation(owner: "https://owner.example"))
        XCTAssertThrowsError(try host.trustMark(issuer: F.intermediate, type: Self.delegatedMark, subject: F.relyingParty)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "server_error")
        }
        XCTAssertEqual(host.trustMarkEntries(for: F.relyingParty), [], "logged and left out, never thrown")
    }
}
