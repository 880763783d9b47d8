import Foundation
@testable import JOSE
import JSON
import Support
import XCTest
@testable import Federation

/// Statements this host signs are built from the claims it signed (not parsed back from the JWT),
/// still pass the section 3.2 checks, and are cached in as little memory as their budget counts.
final class SignedHereStatementTests: XCTestCase {
    private typealias F = FederationFixture
    private let clock = ManualClock(1_800_000_000)

    /// Every statement of the demo federation: built from its claims, it equals the one decoded
    /// from its JWT, field by field (trust marks, trust mark issuers, policies, keys included).
    func testStatementsBuiltFromSignedClaimsEqualDecodedOnes() throws {
        let (host, _, _) = try F.demo(clock: clock)
        var signed: [SignedJWT] = []
        for id in host.entities.keys.sorted() {
            signed.append(try host.signedEntityConfiguration(of: id, parsed: true))
            for sub in host.subordinates(of: id).keys.sorted() {
                signed.append(try host.signedSubordinateStatement(issuer: id, subject: sub, parsed: true))
            }
        }
        XCTAssertEqual(signed.count, 4 + 3)
        XCTAssertTrue(signed.contains { $0.statement?.trustMarks.isEmpty == false }, "a configuration with a trust mark is covered")
        XCTAssertTrue(signed.contains { $0.statement?.metadataPolicy != nil }, "a statement with a policy is covered")
        for jwt in signed {
            let built = try XCTUnwrap(jwt.statement)
            let decoded = try EntityStatement.decode(jwt.compact)
            XCTAssertEqual(built.compact, decoded.compact)
            XCTAssertEqual(built.keyID, decoded.keyID)
            XCTAssertEqual(built.claims, decoded.claims)
            XCTAssertEqual(built.issuer, decoded.issuer)
            XCTAssertEqual(built.subject, decoded.subject)
            XCTAssertEqual(built.issuedAt, decoded.issuedAt)
            XCTAssertEqual(built.expiresAt, decoded.expiresAt)
            XCTAssertEqual(built.jwks, decoded.jwks)
            XCTAssertEqual(built.metadata, decoded.metadata)
            XCTAssertEqual(built.authorityHints, decoded.authorityHints)
            XCTAssertEqual(built.trustAnchorHints, decoded.trustAnchorHints)
            XCTAssertEqual(built.metadataPolicy, decoded.metadataPolicy)
            XCTAssertEqual(built.metadataPolicyCrit, decoded.metadataPolicyCrit)
            XCTAssertEqual(built.constraints, decoded.constraints)
            XCTAssertEqual(built.trustMarks, decoded.trustMarks)
            XCTAssertEqual(built.trustMarkIssuers, decoded.trustMarkIssuers)
            XCTAssertEqual(built.trustMarkOwners, decoded.trustMarkOwners)
            XCTAssertEqual(built.sourceEndpoint, decoded.sourceEndpoint)
            // Not parsed, yet it verifies like any other statement when asked to.
            XCTAssertNoThrow(try built.verify(with: decoded.isEntityConfiguration ? decoded.jwks : host.keys.publicKeys(for: decoded.issuer)))
        }
    }

    /// The section 3.2 checks still run on what this host signs: a statement it would refuse
    /// from another server is refused from itself too (parsed form absent, chain building fails).
    func testStatementsSignedHereStillPassTheSyntaxChecks() throws {
        let nullMetadata = HostedEntity(name: "odd", entityID: F.base + "/odd", authorityHints: [F.trustAnchor],
                                        metadata: ["openid_relying_party": ["client_name": .null]])
        let badID = HostedEntity(name: "query", entityID: F.base + "/query?x=1", authorityHints: [F.trustAnchor],
                                 metadata: ["openid_relying_party": ["client_name": "Q"]])
        let (host, _, _) = try F.demo(clock: clock, entities: F.entities() + [nullMetadata, badID])
        let source = HostStatementSource(host: host, networkDemand: nil)
        for e in [nullMetadata, badID] {
            XCTAssertNil(try host.signedEntityConfiguration(of: e.entityID, parsed: true).statement)
            XCTAssertThrowsError(try source.entityConfiguration(of: e.entityID, deadline: .distant)) { error in
                XCTAssertEqual((error as? FederationError)?.code, "invalid_trust_chain")
            }
        }
        XCTAssertFalse(host.checkedIdentifiers.contains(badID.entityID), "only identifiers that passed are remembered")
        XCTAssertTrue(host.checkedIdentifiers.contains(nullMetadata.entityID))
    }

    /// The byte-level shortcut accepts only identifiers the full URL check accepts too.
    func testPlainIdentifierShortcutIsASubsetOfTheURLCheck() {
        func passesFullCheck(_ s: String) -> Bool { (try? JSONField(.string(s), path: .root).url(.identifier)) != nil }
        for s in ["http://127.0.0.1:18082/leaf-7", "https://a.example", "https://a.example/x_y~z/", "http://h:1/"] {
            XCTAssertTrue(EntityStatementClaims.isPlainIdentifier(s), s)
            XCTAssertTrue(passesFullCheck(s), s)
        }
        for s in ["https://a.example/?x", "https://u@a.example", "https://a.example:123456", "https://[::1]/", "http://a.example#f",
                  "ftp://a.example", "https://", "https://:80/", "HTTPS://a.example", "https://a.example/é", "https://a b", "https://a.example:"] {
            XCTAssertFalse(EntityStatementClaims.isPlainIdentifier(s), s)
        }
        // Every string of these characters up to length 4 after a scheme: shortcut ⇒ full check.
        let alphabet = ["a", "9", ".", "-", ":", "/", "_", "~", "?", "#", "@", "[", "]", "%", " "]
        var tails = [""]
        for _ in 0 ..< 4 { tails = tails.flatMap { t in alphabet.map { t + $0 } } }
        for scheme in ["http://", "https://"] {
            for tail in tails where EntityStatementClaims.isPlainIdentifier(scheme + tail) {
                XCTAssertTrue(passesFullCheck(scheme + tail), scheme + tail)
            }
        }
    }

    func testSameKeyMaterialComparesTheKeyAlone() throws {
        let a = try JWK(json: ["kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
                               "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"])
        XCTAssertTrue(a.hasSameKeyMaterial(as: a.adding(["kid": "k", "use": "sig", "alg": "ES256", "exp": 1])))
        var otherY = a.json
        otherY["y"] = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a1"
        XCTAssertFalse(a.hasSameKeyMaterial(as: JWK(validated: otherY)))
        var otherCurve = a.json
        otherCurve["crv"] = "P-384"
        XCTAssertFalse(a.hasSameKeyMaterial(as: JWK(validated: otherCurve)))
        let okp = try JWK(json: ["kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"])
        XCTAssertFalse(a.hasSameKeyMaterial(as: okp))
        XCTAssertTrue(okp.hasSameKeyMaterial(as: okp.adding(["kid": "o"])))
    }

    func testCheckedIdentifiersAreBounded() {
        let checked = CheckedIdentifiers(capacity: 3)
        for i in 0..<3 { checked.insert("https://e.example/\(i)") }
        XCTAssertEqual(checked.count, 3)
        XCTAssertTrue(checked.contains("https://e.example/0"))
        checked.insert("https://e.example/3")
        XCTAssertEqual(checked.count, 1, "past its capacity it starts over")
        XCTAssertTrue(checked.contains("https://e.example/3"))
    }

    /// Statements about superiors stay parsed in the cache (they are in every chain below them);
    /// a leaf's are handed to the resolve that asked and cached as the JWT alone.
    func testOnlyStatementsAboutSuperiorsAreKeptParsed() throws {
        let (host, _, _) = try F.demo(clock: clock)
        let leaf = try host.signedEntityConfiguration(of: F.pidProvider, parsed: true)
        XCTAssertNotNil(leaf.statement)
        let again = try host.signedEntityConfiguration(of: F.pidProvider)
        XCTAssertEqual(again.compact, leaf.compact, "served from the cache, not signed again")
        XCTAssertNil(again.statement)
        XCTAssertNotNil(try host.signedEntityConfiguration(of: F.pidProvider, parsed: true).statement, "parsed again on demand")
        XCTAssertNil(try host.signedSubordinateStatement(issuer: F.intermediate, subject: F.pidProvider, parsed: true).withoutStatement.statement)
        _ = try host.signedSubordinateStatement(issuer: F.intermediate, subject: F.pidProvider, parsed: true)
        XCTAssertNil(try host.signedSubordinateStatement(issuer: F.intermediate, subject: F.pidProvider).statement)

        _ = try host.signedEntityConfiguration(of: F.intermediate, parsed: true)
        XCTAssertNotNil(try host.signedEntityConfiguration(of: F.intermediate).statement)
        _ = try host.signedSubordinateStatement(issuer: F.trustAnchor, subject: F.intermediate, parsed: true)
        XCTAssertNotNil(try host.signedSubordinateStatement(issuer: F.trustAnchor, subject: F.intermediate).statement)
        // A resolve still answers, from both kinds.
        XCTAssertNoThrow(try host.resolveResponse(resolver: F.trustAnchor, subject: F.pidProvider, trustAnchors: [F.trustAnchor], entityTypes: []))
    }

    /// A JWT fresh from the signer sits in a string grown by appending, up to twice its length;
    /// the cache keeps a copy of exactly its size, which is what its byte budget counts.
    func testCachedJWTsAreStoredWithoutSlack() throws {
        let (host, _, _) = try F.demo(clock: clock)
        let response = try host.signedResolveResponse(resolver: F.trustAnchor, subject: F.pidProvider, trustAnchors: [F.trustAnchor], entityTypes: [])
        let statement = try host.signedSubordinateStatement(issuer: F.intermediate, subject: F.pidProvider)
        for jwt in [response.compact, statement.compact] {
            let size = try XCTUnwrap(Self.allocationSize(of: jwt))
            XCTAssertLessThan(size, jwt.utf8.count + 96, "allocation of \(size) bytes for \(jwt.utf8.count)")
        }
        let copy = SignedStatementCache.exactCopy(response.compact)
        XCTAssertEqual(copy, response.compact)
    }

    /// glibc's malloc_usable_size of a native string's storage (its UTF-8 bytes follow a
    /// 32-byte header); nil where that cannot be asked.
    private static func allocationSize(of s: String) -> Int? {
        typealias Usable = @convention(c) (UnsafeMutableRawPointer?) -> Int
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size") else { return nil }
        let usable = unsafeBitCast(symbol, to: Usable.self)
        return s.utf8.withContiguousStorageIfAvailable { bytes in
            usable(UnsafeMutableRawPointer(mutating: bytes.baseAddress!) - 32)
        }
    }
}
