import Cryptography
import XCTest

/// The cache of validated `x5c` chains: a hit within the chain's validity window, validation
/// afresh (so a refusal) outside it, a bound on its size, and a miss for another root set or
/// another chain.
final class ValidatedChainCacheTests: XCTestCase {
    private let now: Int64 = 1_767_225_600 // 2026-01-01T00:00:00Z
    private let day: Int64 = 86_400

    private struct PKI {
        let root: Certificate
        let leafKey: PrivateKey
        let leaf: Certificate
        var x5c: [String] { Certificate.x5c([leaf]) }
    }

    /// A root valid for ten years and a leaf valid for one (from a day ago).
    private func makePKI(name: String = "Trustbed Test Root") throws -> PKI {
        let rootKey = try PrivateKey(generatingFor: .ES256)
        let root = try AnnexB.makeIACA(
            key: rootKey, country: "NL", stateOrProvince: "Zuid-Holland", organization: "Trustbed", commonName: name,
            issuerAltName: .uri("https://issuer.example/pid"), crlURL: "https://issuer.example/pid/iaca.crl",
            validity: .init(notBefore: now - day, notAfter: now + 3650 * day))
        let leafKey = try PrivateKey(generatingFor: .ES256)
        let leaf = try AnnexB.makeDocumentSigner(
            subjectKey: leafKey.publicKey, iaca: root, iacaKey: rootKey, organization: "Trustbed", commonName: "Leaf of \(name)",
            issuerAltName: .email("pki@issuer.example"), crlURL: "https://issuer.example/pid/iaca.crl",
            validity: .init(notBefore: now - day, notAfter: now + 365 * day))
        return PKI(root: root, leafKey: leafKey, leaf: leaf)
    }

    func testHitReturnsTheLeafAndItsWindow() throws {
        let pki = try makePKI()
        let cache = ValidatedChainCache()
        let rootsID = ValidatedChainCache.identity(of: [pki.root])
        let first = try cache.validate(x5c: pki.x5c, roots: [pki.root], rootsID: rootsID, at: now)
        XCTAssertEqual(first.leafKey, pki.leafKey.publicKey)
        XCTAssertEqual(first.leafSubject, pki.leaf.subjectText)
        XCTAssertEqual(first.notBefore, now - day)
        XCTAssertEqual(first.notAfter, now + 365 * day, "the window is the path's intersection: the leaf's")
        XCTAssertEqual(cache.count, 1)
        let second = try cache.validate(x5c: pki.x5c, roots: [pki.root], rootsID: rootsID, at: now + 10)
        XCTAssertTrue(second.leafKey === first.leafKey, "a hit returns the cached entry")
        XCTAssertEqual(cache.count, 1)
    }

    func testOutsideTheWindowTheChainIsValidatedAgainAndRefused() throws {
        let pki = try makePKI()
        let cache = ValidatedChainCache()
        let rootsID = ValidatedChainCache.identity(of: [pki.root])
        _ = try cache.validate(x5c: pki.x5c, roots: [pki.root], rootsID: rootsID, at: now)
        XCTAssertThrowsError(try cache.validate(x5c: pki.x5c, roots: [pki.root], rootsID: rootsID, at: now + 366 * day)) { error in
            XCTAssertEqual((error as? CertificateError)?.code, .expired)
        }
        XCTAssertThrowsError(try cache.validate(x5c: pki.x5c, roots: [pki.root], rootsID: rootsID, at: now - 2 * day)) { error in
            XCTAssertEqual((error as? CertificateError)?.code, .notYetValid)
        }
    }

    func testAnotherRootSetMisses() throws {
        let pki = try makePKI()
        let other = try makePKI(name: "Another Root")
        let cache = ValidatedChainCache()
        _ = try cache.validate(x5c: pki.x5c, roots: [pki.root], rootsID: ValidatedChainCache.identity(of: [pki.root]), at: now)
        // The same chain against roots that do not include its own: validated, so refused.
        XCTAssertThrowsError(try cache.validate(x5c: pki.x5c, roots: [other.root],
                                                rootsID: ValidatedChainCache.identity(of: [other.root]), at: now))
        XCTAssertNotEqual(ValidatedChainCache.identity(of: [pki.root]), ValidatedChainCache.identity(of: [pki.root, other.root]))
    }

    func testAnotherChainMisses() throws {
        let pki = try makePKI()
        let cache = ValidatedChainCache()
        let rootsID = ValidatedChainCache.identity(of: [pki.root])
        _ = try cache.validate(x5c: pki.x5c, roots: [pki.root], rootsID: rootsID, at: now)
        // A chain with one byte changed in its leaf (its signature no longer verifies).
        var der = pki.leaf.der
        der[der.count - 3] ^= 0x01
        let tampered = try Certificate(der: der)
        XCTAssertThrowsError(try cache.validate(x5c: Certificate.x5c([tampered]), roots: [pki.root], rootsID: rootsID, at: now))
        // The leaf with the root appended is another chain: validated on its own, and cached apart.
        _ = try cache.validate(x5c: Certificate.x5c([pki.leaf, pki.root]), roots: [pki.root], rootsID: rootsID, at: now)
        XCTAssertEqual(cache.count, 2)
    }

    func testTheCacheIsBounded() throws {
        let cache = ValidatedChainCache(limit: 2)
        var last: PKI?
        for index in 0..<4 {
            let pki = try makePKI(name: "Root \(index)")
            _ = try cache.validate(x5c: pki.x5c, roots: [pki.root], rootsID: ValidatedChainCache.identity(of: [pki.root]), at: now)
            XCTAssertLessThanOrEqual(cache.count, 2)
            last = pki
        }
        XCTAssertEqual(cache.count, 2)
        // The newest entry is one of those kept.
        let pki = try XCTUnwrap(last)
        _ = try cache.validate(x5c: pki.x5c, roots: [pki.root], rootsID: ValidatedChainCache.identity(of: [pki.root]), at: now)
        XCTAssertEqual(cache.count, 2)
    }

    func testARootSigningDirectlyIsAcceptedOnlyWhenAsked() throws {
        let pki = try makePKI()
        let cache = ValidatedChainCache()
        let rootsID = ValidatedChainCache.identity(of: [pki.root])
        let x5c = Certificate.x5c([pki.root])
        let entry = try cache.validate(x5c: x5c, roots: [pki.root], rootsID: rootsID, at: now, rootItself: true)
        XCTAssertEqual(entry.leafKey, try pki.root.publicKey())
        // Without `rootItself` the same x5c is another key, validated as a path (a self-signed
        // root is its own path in OpenSSL), not served from the entry above.
        _ = try? cache.validate(x5c: x5c, roots: [pki.root], rootsID: rootsID, at: now)
        XCTAssertEqual(cache.count, (try? cache.validate(x5c: x5c, roots: [pki.root], rootsID: rootsID, at: now)) == nil ? 1 : 2)
    }

    /// A COSE `x5chain` (DER, leaf first) with the document signer EKU: validated once, then a
    /// hit carrying the decoded chain and the anchor's subject; another EKU is another key (and
    /// refused, the leaf not having it); outside the window it is validated again and refused.
    func testDERChainWithARequiredEKU() throws {
        let pki = try makePKI()
        let cache = ValidatedChainCache()
        let rootsID = ValidatedChainCache.identity(of: [pki.root])
        let der = [pki.leaf.der]
        let first = try cache.validate(der: der, roots: [pki.root], rootsID: rootsID, at: now,
                                       requiredExtendedKeyUsage: AnnexB.documentSignerEKU)
        XCTAssertEqual(first.chain.map(\.der), der)
        XCTAssertEqual(first.anchorSubject, pki.root.subjectText)
        XCTAssertEqual(first.leafKey, pki.leafKey.publicKey)
        let second = try cache.validate(der: der, roots: [pki.root], rootsID: rootsID, at: now + 10,
                                        requiredExtendedKeyUsage: AnnexB.documentSignerEKU)
        XCTAssertTrue(second.leafKey === first.leafKey, "a hit returns the cached entry")
        XCTAssertEqual(cache.count, 1)
        XCTAssertThrowsError(try cache.validate(der: der, roots: [pki.root], rootsID: rootsID, at: now,
                                                requiredExtendedKeyUsage: "1.3.6.1.5.5.7.3.1"), "the leaf is not a TLS server")
        XCTAssertEqual(cache.count, 1, "a refusal is not cached")
        XCTAssertThrowsError(try cache.validate(der: der, roots: [pki.root], rootsID: rootsID, at: now + 366 * day,
                                                requiredExtendedKeyUsage: AnnexB.documentSignerEKU)) { error in
            XCTAssertEqual((error as? CertificateError)?.code, .expired)
        }
        XCTAssertThrowsError(try cache.validate(der: [], roots: [pki.root], rootsID: rootsID, at: now))
    }
}
