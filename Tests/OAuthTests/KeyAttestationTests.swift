import Cryptography
import Foundation
@testable import JOSE
import JSON
import OAuth
import Support
import XCTest

/// Key attestations (OpenID4VCI 1.0 Appendix D, F.1, F.3): the checks of `KeyAttestation.verify`
/// (service-independent). Attestations are signed with the
/// project's own signer by `OAuthTestKit.attesterKey`, certified under `OAuthTestKit.attestationRoot`.
final class KeyAttestationTests: XCTestCase {
    private let now = OAuthTestKit.start
    private let trust = AttestationIssuerTrust(roots: [OAuthTestKit.attestationRoot], trustAnchors: [], walletProviders: nil)

    private func attestation(_ keys: [PrivateKey], header: [String: JSONValue] = [:], claims: [String: JSONValue] = [:],
                             signer: PrivateKey = OAuthTestKit.attesterKey,
                             certificate: Certificate = OAuthTestKit.attesterCertificate) -> String {
        var h: [String: JSONValue] = ["typ": "key-attestation+jwt", "alg": "ES256",
                                      "x5c": .array(Certificate.x5c([certificate]).map(JSONValue.string))]
        for (k, v) in header { if v.isNull { h.removeValue(forKey: k) } else { h[k] = v } }
        var c: [String: JSONValue] = ["iat": .int(now), "exp": .int(now + 3_600),
                                      "attested_keys": .array(keys.map(OAuthTestKit.publicJWK))]
        for (k, v) in claims { if v.isNull { c.removeValue(forKey: k) } else { c[k] = v } }
        return OAuthTestKit.sign(h, c, signer)
    }

    /// `compact` with its header replaced (the signature no longer matches; the check of `alg`
    /// comes first).
    private func withHeader(_ compact: String, _ header: JSONValue, signature: String? = nil) -> String {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        return Base64URL.encode(header.bytes) + "." + parts[1] + "." + (signature ?? String(parts[2]))
    }

    private func refusal(_ compact: String) -> String? {
        do {
            _ = try KeyAttestation.verify(compact, trust: trust, now: now)
            return nil
        } catch {
            return error.description
        }
    }

    func testVerifiedAttestationCarriesKeysStorageAndIssuer() throws {
        let keys = [try PrivateKey(generatingFor: .ES256), try PrivateKey(generatingFor: .ES256)]
        let verified = try KeyAttestation.verify(
            attestation(keys, claims: ["key_storage": ["iso_18045_high"], "user_authentication": ["iso_18045_moderate"], "nonce": "n"]),
            trust: trust, now: now)
        XCTAssertEqual(verified.attestedKeys, keys.map { JWK(publicKey: $0.publicKey).keyMembersOnly })
        XCTAssertEqual(verified.keyStorage, ["iso_18045_high"])
        XCTAssertEqual(verified.nonce, "n")
        XCTAssertTrue(verified.issuer.contains("Test Wallet Provider"), "no iss: the x5c leaf's subject, got \(verified.issuer)")
        let named = try KeyAttestation.verify(attestation(keys, claims: ["iss": "https://wp.example"]), trust: trust, now: now)
        XCTAssertEqual(named.issuer, "https://wp.example")
    }

    func testEveryRefusal() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let foreignRoot = try PrivateKey(generatingFor: .ES256)
        let foreign = try AnnexB.makeIACA(key: foreignRoot, country: "NL", commonName: "Foreign", issuerAltName: .uri("https://f.example"),
                                          crlURL: "https://f.example/crl", validity: .init(notBefore: now - 86_400, notAfter: now + 86_400))
        var privateJWK = JWK(publicKey: key.publicKey).json
        privateJWK["d"] = "AAAA"
        let x5c = Certificate.x5c([OAuthTestKit.attesterCertificate, OAuthTestKit.attestationRoot]).map(JSONValue.string)
        let cases: [(String, String, String)] = [
            ("malformed", "not-a-jwt", "malformed"),
            ("wrong typ", attestation([key], header: ["typ": "openid4vci-proof+jwt"]), "typ"),
            ("alg none", withHeader(attestation([key]), ["typ": "key-attestation+jwt", "alg": "none"], signature: ""), "alg"),
            ("alg HS256", withHeader(attestation([key]), ["typ": "key-attestation+jwt", "alg": "HS256"]), "alg"),
            ("expired", attestation([key], claims: ["exp": .int(now - 1)]), "expired"),
            ("future iat", attestation([key], claims: ["iat": .int(now + 61)]), "future"),
            ("no iat", attestation([key], claims: ["iat": .null]), "iat"),
            ("foreign root", attestation([key], signer: foreignRoot, certificate: foreign), "trusted root"),
            ("no x5c, no iss", attestation([key], header: ["x5c": .null]), "no x5c"),
            ("chain too long", attestation([key], header: ["x5c": .array(x5c + x5c + x5c)]), "at most 5"),
            ("empty attested_keys", attestation([], claims: [:]), "non-empty"),
            ("private member", attestation([key], claims: ["attested_keys": [.object(privateJWK)]]), "private"),
            ("key_storage not an array", attestation([key], claims: ["key_storage": "iso_18045_high"]), "key_storage"),
            ("signed by another key", attestation([key], signer: key), "signature"),
        ]
        for (name, token, expected) in cases {
            guard let why = refusal(token) else { XCTFail("\(name): accepted"); continue }
            XCTAssertTrue(why.contains(expected), "\(name): \(why)")
        }
        XCTAssertNil(refusal(attestation([key], claims: ["iat": .int(now + 60), "exp": .null])), "60 s of skew; exp is optional")
    }

    func testRequirementNeedsOneListedLevel() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let verified = try KeyAttestation.verify(attestation([key], claims: ["key_storage": ["iso_18045_moderate"]]), trust: trust, now: now)
        XCTAssertNil(verified.unmet(KeyAttestationRequirement()))
        XCTAssertNil(verified.unmet(KeyAttestationRequirement(keyStorage: ["iso_18045_high", "iso_18045_moderate"])))
        XCTAssertNotNil(verified.unmet(KeyAttestationRequirement(keyStorage: ["iso_18045_high"])))
        XCTAssertNotNil(verified.unmet(KeyAttestationRequirement(userAuthentication: ["iso_18045_high"])))
    }
}
