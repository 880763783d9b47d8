import Cryptography
import Foundation
import HTTP
import Issuance
import JOSE
import JSON
import Logging
import Store
import Support
import XCTest

/// A PID Provider for the OAuth tests (in-memory database, manual clock), and the wallet side:
/// DPoP proofs, client attestations and their PoPs, signed the way a wallet signs them.
enum OAuthFixture {
    static let issuer = "https://issuer.example/pid-provider"
    static let start: Int64 = 1_760_000_000
    static let sdJWT = "urn:eudi:pid:1"
    static let mdoc = "eu.europa.ec.eudi.pid.1"

    private static let keys: IssuerKeys = {
        let dir = NSTemporaryDirectory() + "trustbed-oauth-tests-\(getpid())"
        return try! IssuerKeys.loadOrCreate(directory: dir, issuer: issuer, country: "NL", authority: "Test", now: start)
    }()

    /// A wallet provider's root (an Annex B-shaped CA serves as any X.509 root here) and an
    /// attester key certified under it.
    static let attestationRootKey = try! PrivateKey(generatingFor: .ES256)
    static let attestationRoot = try! AnnexB.makeIACA(
        key: attestationRootKey, country: "NL", commonName: "Test Wallet Provider Root", issuerAltName: .uri("https://wp.example"),
        crlURL: "https://wp.example/crl", validity: .init(notBefore: start - 86_400, notAfter: start + 365 * 86_400))
    static let attesterKey = try! PrivateKey(generatingFor: .ES256)
    static let attesterCertificate = try! AnnexB.makeDocumentSigner(
        subjectKey: attesterKey.publicKey, iaca: attestationRoot, iacaKey: attestationRootKey, commonName: "Test Wallet Provider",
        issuerAltName: .uri("https://wp.example"), crlURL: "https://wp.example/crl",
        validity: .init(notBefore: start - 3_600, notAfter: start + 300 * 86_400))

    static func make(clock: ManualClock = ManualClock(start), database: Database? = nil,
                     _ adjust: (inout IssuerConfiguration) -> Void = { _ in }) throws -> PIDProvider {
        var configuration = IssuerConfiguration(
            credentialConfigurations: [
                CredentialConfiguration(id: mdoc, format: .mdoc, type: mdoc, scope: mdoc),
                CredentialConfiguration(id: sdJWT, format: .sdJWT, type: sdJWT, scope: sdJWT),
            ],
            personas: [
                Persona(id: "erika", personalAdministrativeNumber: "1",
                        claims: ["given_name": "Erika", "family_name": "Mustermann", "birthdate": "1984-01-26"]),
                Persona(id: "zoe", personalAdministrativeNumber: "3",
                        claims: ["given_name": "Zoë", "family_name": "Ðorđević", "birthdate": "2010-05-05"]),
            ])
        adjust(&configuration)
        return PIDProvider(
            issuer: issuer, entityName: "pid-provider", configuration: configuration, keys: keys,
            database: try database ?? Database(path: ":memory:"), clock: clock, logger: Logger(label: "oauth-tests"),
            trustAnchors: [], attestationRoots: [attestationRoot], walletProviderTrust: nil, adminToken: "admin")
    }

    static func publicJWK(_ key: PrivateKey) -> JSONValue {
        let jwk = JWK(publicKey: key.publicKey)
        return .object(jwk.json.filter { ["kty", "crv", "x", "y"].contains($0.key) })
    }

    static func sign(_ header: [String: JSONValue], _ claims: [String: JSONValue], _ key: PrivateKey) -> String {
        try! JWS.sign(header: header, payloadBytes: JSONValue.object(claims).bytes, key: key, algorithm: .ES256)
    }

    /// RFC 9449 §4.2 proof; `change` edits header and claims before signing.
    static func dpop(_ key: PrivateKey, method: String = "POST", url: String, at iat: Int64, accessToken: String? = nil,
                     nonce: String? = nil, jti: String = UUID().uuidString,
                     change: (inout [String: JSONValue], inout [String: JSONValue]) -> Void = { _, _ in }) -> String {
        var header: [String: JSONValue] = ["typ": "dpop+jwt", "alg": "ES256", "jwk": publicJWK(key)]
        var claims: [String: JSONValue] = ["jti": .string(jti), "htm": .string(method), "htu": .string(url), "iat": .int(iat)]
        if let accessToken { claims["ath"] = .string(Base64URL.encode(Digest.sha256(Array(accessToken.utf8)))) }
        if let nonce { claims["nonce"] = .string(nonce) }
        change(&header, &claims)
        return sign(header, claims, key)
    }

    /// A wallet instance attested with an `x5c` chaining to `attestationRoot` (or signed by
    /// `attester` when given, to show an untrusted attester fails).
    struct Client {
        let clientID: String
        let instanceKey = try! PrivateKey(generatingFor: .ES256)
        let attestation: String

        init(clientID: String = "wallet-" + UUID().uuidString.prefix(8), at now: Int64, attester: PrivateKey = OAuthFixture.attesterKey,
             certificate: Certificate = OAuthFixture.attesterCertificate) {
            self.clientID = clientID
            attestation = OAuthFixture.sign(
                ["typ": "oauth-client-attestation+jwt", "alg": "ES256", "x5c": .array(Certificate.x5c([certificate]).map(JSONValue.string))],
                ["iss": "https://wp.example", "sub": .string(clientID), "iat": .int(now), "exp": .int(now + 3_600),
                 "cnf": ["jwk": OAuthFixture.publicJWK(instanceKey)]], attester)
        }

        func pop(audience: String = OAuthFixture.issuer, at now: Int64, jti: String = UUID().uuidString) -> String {
            OAuthFixture.sign(["typ": "oauth-client-attestation-pop+jwt", "alg": "ES256"],
                              ["iss": .string(clientID), "aud": .string(audience), "jti": .string(jti), "iat": .int(now)], instanceKey)
        }

        func headers(at now: Int64) -> [String: String] {
            ["OAuth-Client-Attestation": attestation, "OAuth-Client-Attestation-PoP": pop(at: now)]
        }
    }

    static func send(_ router: Router<String>, _ method: HTTPMethod, _ path: String, query: String? = nil,
                     headers: [String: String] = [:], form: [(String, String)]? = nil) -> HTTPResponse {
        var headers = headers
        var body: [UInt8] = []
        if let form {
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = Array(Parameters(pairs: form.map { (name: $0.0, value: $0.1) }).encoded.utf8)
        }
        let request = HTTPRequest(method: method, path: "/pid-provider" + path, rawQuery: query, headers: headers, body: body)
        return router.respond(to: request, path: Substring(path), context: "pid-provider") ?? HTTPResponse(status: .notFound)
    }

    static func json(_ response: HTTPResponse) throws -> JSONValue { try JSONValue.parse(response.body) }

    /// The query parameters of a redirect's Location.
    static func redirectQuery(_ response: HTTPResponse) -> [String: String] {
        guard let location = response.header("location"), let q = location.firstIndex(of: "?") else { return [:] }
        var out: [String: String] = [:]
        for pair in Parameters(encoded: String(location[location.index(after: q)...])).pairs { out[pair.name] = pair.value }
        return out
    }
}
