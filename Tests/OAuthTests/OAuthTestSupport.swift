import Cryptography
import Foundation
import JOSE
import JSON
import OAuth
import Store
import Support

/// In-memory stores: the repository protocols `OAuth` declares, with no database behind them,
/// so the OAuth value types are tested on their own (the Store repositories have their own tests).
final class MemoryReplayStore: ReplayStore, @unchecked Sendable {
    let seen = Locked<Set<String>>([])
    func recordJTI(issuer: String, purpose: String, jti: String, expiresAt: Int64) throws(StoreError) -> Bool {
        seen.withLock { $0.insert(issuer + "\u{0}" + purpose + "\u{0}" + jti).inserted }
    }
}

final class MemoryTokenStore: AccessTokenStore, @unchecked Sendable {
    let rows = Locked<[String: TokenRecord]>([:])
    func insert(_ token: TokenRecord) throws(StoreError) { rows.withLock { $0[token.tokenHash] = token } }
    func find(issuer: String, tokenHash: String, now: Int64) throws(StoreError) -> TokenRecord? {
        guard let row = rows.read({ $0[tokenHash] }), row.issuer == issuer, row.expiresAt > now else { return nil }
        return row
    }
}

final class MemoryCodeStore: AuthorizationCodeStore, @unchecked Sendable {
    let rows = Locked<[String: CodeRecord]>([:])
    func insert(_ code: CodeRecord) throws(StoreError) { rows.withLock { $0[code.code] = code } }
    func redeem(issuer: String, code: String, now: Int64) throws(StoreError) -> CodeRedemption {
        rows.withLock { rows in
            guard var row = rows[code], row.issuer == issuer else { return .unknown }
            if row.usedAt != nil { return .alreadyUsed }
            if row.expiresAt <= now { return .expired }
            row.usedAt = now
            rows[code] = row
            return .redeemed(row)
        }
    }
}

final class MemoryPushedRequestStore: PushedRequestStore, @unchecked Sendable {
    let rows = Locked<[String: AuthorizationRequestRecord]>([:])
    func insert(_ request: AuthorizationRequestRecord) throws(StoreError) { rows.withLock { $0[request.requestURI] = request } }
    func findPending(issuer: String, requestURI: String, now: Int64) throws(StoreError) -> AuthorizationRequestRecord? {
        guard let row = rows.read({ $0[requestURI] }), row.issuer == issuer, row.expiresAt > now, row.usedAt == nil else { return nil }
        return row
    }
    func consume(issuer: String, requestURI: String, now: Int64) throws(StoreError) -> Bool {
        rows.withLock { rows in
            guard var row = rows[requestURI], row.issuer == issuer, row.usedAt == nil, row.expiresAt > now else { return false }
            row.usedAt = now
            rows[requestURI] = row
            return true
        }
    }
}

/// A store that always fails, to show a storage failure is a 500 with the detail kept apart.
struct FailingReplayStore: ReplayStore {
    func recordJTI(issuer: String, purpose: String, jti: String, expiresAt: Int64) throws(StoreError) -> Bool {
        throw StoreError.sqlite(code: 10, message: "disk I/O error")
    }
}

/// The wallet side, signed as a wallet signs: DPoP proofs, client attestations and PoPs.
enum OAuthTestKit {
    static let issuer = "https://as.example/wallet-provider"
    static let start: Int64 = 1_760_000_000
    static let secret = Array("an issuer's recovery secret....".utf8)

    static let attestationRootKey = try! PrivateKey(generatingFor: .ES256)
    static let attestationRoot = try! AnnexB.makeIACA(
        key: attestationRootKey, country: "NL", commonName: "Test Wallet Provider Root", issuerAltName: .uri("https://wp.example"),
        crlURL: "https://wp.example/crl", validity: .init(notBefore: start - 86_400, notAfter: start + 365 * 86_400))
    static let attesterKey = try! PrivateKey(generatingFor: .ES256)
    static let attesterCertificate = try! AnnexB.makeDocumentSigner(
        subjectKey: attesterKey.publicKey, iaca: attestationRoot, iacaKey: attestationRootKey, commonName: "Test Wallet Provider",
        issuerAltName: .uri("https://wp.example"), crlURL: "https://wp.example/crl",
        validity: .init(notBefore: start - 3_600, notAfter: start + 300 * 86_400))

    static func dpopVerifier(clock: any Clock, replays: any ReplayStore = MemoryReplayStore()) -> DPoPVerifier {
        DPoPVerifier(issuer: issuer, proofWindow: 300, clock: clock,
                     nonces: DPoPNonces(issuer: issuer, secret: secret, lifetime: 300, clock: clock), replayStore: replays)
    }

    static func publicJWK(_ key: PrivateKey) -> JSONValue {
        .object(JWK(publicKey: key.publicKey).json.filter { ["kty", "crv", "x", "y"].contains($0.key) })
    }

    static func sign(_ header: [String: JSONValue], _ claims: [String: JSONValue], _ key: PrivateKey) -> String {
        try! JWS.sign(header: header, payloadBytes: JSONValue.object(claims).bytes, key: key, algorithm: .ES256)
    }

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
}
