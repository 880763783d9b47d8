import Cryptography
import Foundation
import Issuance
import JSON
import Logging
import Store
import Support
import XCTest

/// A provider on a temporary key folder and an in-memory database, for tests of the parts.
func makeTestProvider(directory: String, clock: Clock = ManualClock(1_800_000_000),
                      configure: (inout IssuerConfiguration) -> Void = { _ in }) throws -> PIDProvider {
    let keys = try IssuerKeys.loadOrCreate(directory: directory, issuer: "https://issuer.example/pid", country: "NL",
                                           authority: "Test PID Provider", now: clock.now())
    var configuration = IssuerConfiguration(
        credentialConfigurations: [
            CredentialConfiguration(id: "eu.europa.ec.eudi.pid.1", format: .mdoc, type: "eu.europa.ec.eudi.pid.1", scope: "pid-mdoc"),
            CredentialConfiguration(id: "urn:eudi:pid:1", format: .sdJWT, type: "urn:eudi:pid:1", scope: "pid"),
            CredentialConfiguration(id: "urn:eudi:pid:nl:1", format: .sdJWT, type: "urn:eudi:pid:nl:1", scope: "pid-nl", profile: .nl),
        ],
        personas: [Persona(id: "erika", personalAdministrativeNumber: "123", claims: [
            "given_name": "Erika", "family_name": "Mustermann", "birthdate": "1984-01-26",
        ])])
    configure(&configuration)
    return PIDProvider(issuer: "https://issuer.example/pid", entityName: "pid", configuration: configuration, keys: keys,
                       database: try Database(path: ":memory:"), clock: clock, logger: Logger(label: "test"), trustAnchors: [],
                       attestationRoots: [], walletProviderTrust: nil, adminToken: "admin-secret")
}

final class IssuerKeysTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "issuer-keys-\(UUID().uuidString)"
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testCreatedOnceWithPrivateModesThenReused() throws {
        let first = try IssuerKeys.loadOrCreate(directory: directory, issuer: "https://i.example", country: "NL", authority: "T",
                                                now: 1_800_000_000)
        for name in ["iaca.key.pem", "document-signer.key.pem", "credential-signer.key.pem", "encryption.key.pem", "recovery-secret"] {
            let mode = try FileManager.default.attributesOfItem(atPath: "\(directory)/\(name)")[.posixPermissions] as? Int
            XCTAssertEqual(mode, 0o600, name)
        }
        XCTAssertGreaterThanOrEqual(first.recoverySecret.count, 32)
        let again = try IssuerKeys.loadOrCreate(directory: directory, issuer: "https://i.example", country: "NL", authority: "T",
                                                now: 1_800_000_100)
        XCTAssertEqual(again.iaca, first.iaca)
        XCTAssertEqual(again.documentSigner, first.documentSigner)
        XCTAssertEqual(again.recoverySecret, first.recoverySecret)
        XCTAssertEqual(again.encryptionJWK, first.encryptionJWK)
        // The document signer chains to the IACA and carries the mdoc EKU; the IACA is a CA.
        XCTAssertTrue(first.documentSigner.isSigned(by: try first.iaca.publicKey()))
        XCTAssertEqual(first.documentSigner.extendedKeyUsage, [AnnexB.documentSignerEKU])
        XCTAssertEqual(first.iaca.isCA, true)
        // The credential signer (SD-JWT VC, status lists, signed metadata): same IACA, no mdoc EKU.
        XCTAssertEqual(again.credentialSigner, first.credentialSigner)
        XCTAssertTrue(first.credentialSigner.isSigned(by: try first.iaca.publicKey()))
        XCTAssertNil(first.credentialSigner.extendedKeyUsage)
        XCTAssertEqual(first.credentialSigner.subjectAlternativeNames, [.uri("https://i.example")])
        XCTAssertEqual(first.x5c, Certificate.x5c([first.credentialSigner]))
        XCTAssertNotEqual(first.credentialSignerKey.publicKey, first.documentSignerKey.publicKey)
        XCTAssertNoThrow(try Certificate.verifyChain(leaf: first.credentialSigner, roots: [first.iaca], at: 1_800_000_000))
        XCTAssertEqual(first.iaca.crlDistributionPointURIs, ["https://i.example/iaca.crl"])
        XCTAssertEqual(first.documentSigner.subjectAlternativeNames, [.uri("https://i.example")])
        // Served under another URL, the issuer gets a document signer naming that URL.
        let moved = try IssuerKeys.loadOrCreate(directory: directory, issuer: "https://moved.example", country: "NL", authority: "T",
                                                now: 1_800_000_200)
        XCTAssertEqual(moved.documentSigner.subjectAlternativeNames, [.uri("https://moved.example")])
        XCTAssertEqual(moved.iaca, first.iaca)
    }

    /// A key folder from before the credential signer existed keeps its keys and gains one.
    func testFolderWithoutCredentialSignerGetsOneAndKeepsTheRest() throws {
        let first = try IssuerKeys.loadOrCreate(directory: directory, issuer: "https://i.example", country: "NL", authority: "T",
                                                now: 1_800_000_000)
        let before = try ["iaca.pem", "iaca.key.pem", "document-signer.pem", "document-signer.key.pem", "encryption.key.pem",
                          "recovery-secret"].map { try String(contentsOfFile: "\(directory)/\($0)", encoding: .utf8) }
        try FileManager.default.removeItem(atPath: directory + "/credential-signer.pem")
        try FileManager.default.removeItem(atPath: directory + "/credential-signer.key.pem")
        let again = try IssuerKeys.loadOrCreate(directory: directory, issuer: "https://i.example", country: "NL", authority: "T",
                                                now: 1_800_000_100)
        let after = try ["iaca.pem", "iaca.key.pem", "document-signer.pem", "document-signer.key.pem", "encryption.key.pem",
                         "recovery-secret"].map { try String(contentsOfFile: "\(directory)/\($0)", encoding: .utf8) }
        XCTAssertEqual(after, before, "existing keys are never overwritten")
        XCTAssertNotEqual(again.credentialSigner, first.credentialSigner)
        XCTAssertTrue(again.credentialSigner.isSigned(by: try first.iaca.publicKey()))
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory + "/credential-signer.key.pem"))
    }

    func testDocumentSignerIsReplacedBeforeItExpires() throws {
        let start: Int64 = 1_800_000_000
        let first = try IssuerKeys.loadOrCreate(directory: directory, issuer: "https://i.example", country: "NL", authority: "T", now: start)
        let later = try IssuerKeys.loadOrCreate(directory: directory, issuer: "https://i.example", country: "NL", authority: "T",
                                                now: start + 340 * 86_400)
        XCTAssertNotEqual(later.documentSigner, first.documentSigner, "a signer within 30 days of its end is replaced")
        XCTAssertGreaterThan(later.documentSigner.notAfter, start + 370 * 86_400)
        XCTAssertEqual(later.iaca, first.iaca)
        XCTAssertEqual(later.recoverySecret, first.recoverySecret, "the recovery secret never changes")
    }
}

final class IssuerMetadataTests: XCTestCase {
    func testMetadataFollowsTheConfiguration() throws {
        let dir = NSTemporaryDirectory() + "issuer-md-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let provider = try makeTestProvider(directory: dir) { $0.requireClientAttestation = true; $0.batchSize = 3 }
        let md = provider.credentialIssuerMetadata
        XCTAssertEqual(md["credential_issuer"], "https://issuer.example/pid")
        XCTAssertEqual(md["batch_credential_issuance"], ["batch_size": 3])
        let configs = try XCTUnwrap(md["credential_configurations_supported"]?.objectValue)
        XCTAssertEqual(configs["eu.europa.ec.eudi.pid.1"]?["credential_signing_alg_values_supported"], [-7])
        XCTAssertEqual(configs["urn:eudi:pid:1"]?["vct"], "urn:eudi:pid:1")
        let nlPaths = configs["urn:eudi:pid:nl:1"]?["credential_metadata"]?["claims"]?.arrayValue?.compactMap { $0["path"] } ?? []
        XCTAssertTrue(nlPaths.contains(["bsn"]))
        let nlBSN = configs["urn:eudi:pid:nl:1"]?["credential_metadata"]?["claims"]?.arrayValue?.first { $0["path"] == ["bsn"] }
        XCTAssertEqual(nlBSN?["mandatory"], false, "personas without a BSN get an NL PID without one")
        let mdocPaths = configs["eu.europa.ec.eudi.pid.1"]?["credential_metadata"]?["claims"]?.arrayValue?.compactMap { $0["path"] } ?? []
        XCTAssertTrue(mdocPaths.contains(["eu.europa.ec.eudi.pid.nl.1", "recovery_code"]), "the domestic nameSpace (PID_06)")
        XCTAssertFalse(mdocPaths.contains(["eu.europa.ec.eudi.pid.1", "recovery_code"]))
        XCTAssertTrue(mdocPaths.contains(["eu.europa.ec.eudi.pid.1", "given_name"]))
        let asMetadata = provider.authorizationServerMetadata
        XCTAssertEqual(asMetadata["pre-authorized_grant_anonymous_access_supported"], false)
        XCTAssertEqual(asMetadata["token_endpoint_auth_methods_supported"], ["attest_jwt_client_auth"])
        // The entity file's members win over generated ones; other types stay as declared.
        let merged = provider.mergedEntityMetadata([
            "openid_credential_issuer": ["display": [["name": "Mine"]]],
            "federation_entity": ["organization_name": "X"],
        ])
        XCTAssertEqual(merged["openid_credential_issuer"]?["display"], [["name": "Mine"]])
        XCTAssertEqual(merged["openid_credential_issuer"]?["credential_endpoint"], "https://issuer.example/pid/credential")
        XCTAssertEqual(merged["federation_entity"], ["organization_name": "X"])
    }
}
