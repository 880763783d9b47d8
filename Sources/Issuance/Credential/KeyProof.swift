import Cryptography
import Foundation
import JOSE
import JSON
import OAuth
import Store
import Support

/// A `jwt` key proof (OpenID4VCI 1.0 Appendix F.1) that passed every check: the public key a
/// credential is to be bound to, and the `c_nonce` it carried.
public struct KeyProof: Sendable, Equatable {
    public let key: JWK
    /// RFC 7638 thumbprint of `key`: one credential per key, and what the record keeps.
    public let thumbprint: String
    public let nonce: String
    /// `key` as the OpenSSL key a `jwk` proof was verified with (its point checked on the
    /// curve), so an mdoc's device key is made without importing the JWK again; nil for `x5c`.
    public let publicKey: PublicKey?
    /// The key attestation that vouched for `key` (Appendix D), when there was one.
    public let attestation: KeyAttestation?

    public init(key: JWK, thumbprint: String, nonce: String, publicKey: PublicKey?, attestation: KeyAttestation? = nil) {
        self.key = key
        self.thumbprint = thumbprint
        self.nonce = nonce
        self.publicKey = publicKey
        self.attestation = attestation
    }

    /// What the issued credential's record keeps of the key attestation (never claim values).
    var attester: Attester? { attestation.map { Attester(issuer: $0.issuer, keyStorage: $0.keyStorage) } }

    /// Every `c_nonce` the proof carries: its own, and its key attestation's when that names one.
    var nonces: [String] {
        guard let other = attestation?.nonce, other != nonce else { return [nonce] }
        return [nonce, other]
    }
}

/// Who attested a credential's key and at what storage level, as the issued-credential record
/// keeps it: also stored with a deferred request, so a credential delivered later is recorded
/// as one issued at once would be.
struct Attester: Sendable, Equatable {
    let issuer: String
    let keyStorage: [String]?

    var json: JSONValue {
        var object: [String: JSONValue] = ["issuer": .string(issuer)]
        if let keyStorage { object["key_storage"] = .array(keyStorage.map(JSONValue.string)) }
        return .object(object)
    }

    /// The form `json` wrote; nil for `null` (a key without an attestation).
    init?(json: JSONValue) {
        guard let issuer = json["issuer"]?.stringValue else { return nil }
        self.init(issuer: issuer, keyStorage: json["key_storage"]?.stringArray)
    }

    init(issuer: String, keyStorage: [String]?) {
        self.issuer = issuer
        self.keyStorage = keyStorage
    }
}

extension PIDProvider {
    static let keyProofType = "openid4vci-proof+jwt"
    /// `proof_signing_alg_values_supported` of every configuration (see `configurationMetadata`).
    static let keyProofAlgorithms: Set<SignatureAlgorithm> = [.ES256]

    /// Checks the `proofs.jwt` array of one credential request and then consumes its `c_nonce`
    /// (§8.2, Appendix F.1, §13.4) in a transaction of its own. The credential endpoint uses
    /// `checkKeyProofs` and `consumeCNonces(of:in:)` instead, so the nonce is consumed in the
    /// transaction that records the issuance.
    public func verifyKeyProofs(_ jwts: [String], grant: AccessGrant) throws(IssuanceError) -> [KeyProof] {
        let proofs = try checkKeyProofs(jwts, grant: grant)
        try inCredentialTransaction { db in try consumeCNonces(of: proofs, in: db) }
        return proofs
    }

    /// Checks the proofs of one credential request (`proofs.jwt` or `proofs.attestation`)
    /// without touching any nonce, then applies the configuration's `key_attestations_required`
    /// (Appendix D.2): every proof must carry a key attestation meeting it, else `invalid_proof`.
    public func checkProofs(_ proofs: CredentialRequest.Proofs, grant: AccessGrant,
                            requirement: KeyAttestationRequirement?) throws(IssuanceError) -> [KeyProof] {
        let checked: [KeyProof]
        switch proofs {
        case .jwt(let jwts): checked = try checkKeyProofs(jwts, grant: grant)
        case .attestation(let compact): checked = try checkAttestationProof(compact)
        }
        guard let requirement else { return checked }
        for (i, proof) in checked.enumerated() {
            guard let attestation = proof.attestation else {
                throw IssuanceError.invalidProof(
                    "proofs.jwt[\(i)]: this credential configuration requires a key attestation (key_attestations_required)")
            }
            if let why = attestation.unmet(requirement) { throw IssuanceError.invalidProof("key attestation: \(why)") }
        }
        return checked
    }

    /// An `attestation` proof (Appendix F.3): one key attestation, no proof JWT; its `nonce` is
    /// the `c_nonce` and each attested key gets a credential (at most `batch_size`).
    func checkAttestationProof(_ compact: String) throws(IssuanceError) -> [KeyProof] {
        let attestation = try verifyKeyAttestation(compact, what: "proofs.attestation[0]")
        guard let nonce = attestation.nonce else {
            throw IssuanceError.invalidProof("proofs.attestation[0]: nonce must carry a c_nonce from the nonce endpoint")
        }
        guard attestation.attestedKeys.count <= configuration.batchSize else {
            throw IssuanceError.invalidCredentialRequest(
                "the key attestation attests \(attestation.attestedKeys.count) keys; at most \(configuration.batchSize) credentials per request (batch_credential_issuance.batch_size)")
        }
        var proofs: [KeyProof] = []
        for (i, key) in attestation.attestedKeys.enumerated() {
            // A credential is bound to each key without a signature by it, so the key must be
            // one this issuer can bind both formats to (and the mdoc device key is made from it).
            let publicKey: PublicKey
            do throws(JOSEError) { publicKey = try key.publicKey() } catch {
                throw IssuanceError.invalidProof("proofs.attestation[0]: attested_keys[\(i)]: \(error)")
            }
            guard key.kty == "EC", key.json["crv"]?.stringValue == "P-256" else {
                throw IssuanceError.invalidProof("proofs.attestation[0]: attested_keys[\(i)] must be an EC P-256 key")
            }
            proofs.append(KeyProof(key: key, thumbprint: key.thumbprint(), nonce: nonce, publicKey: publicKey, attestation: attestation))
        }
        return proofs
    }

    /// A key attestation checked against the issuer's attestation trust, as `invalid_proof`.
    func verifyKeyAttestation(_ compact: String, what: String) throws(IssuanceError) -> KeyAttestation {
        do throws(KeyAttestation.Refusal) {
            return try KeyAttestation.verify(compact, trust: attestationTrust, now: clock.now())
        } catch {
            throw IssuanceError.invalidProof("\(what): key attestation: \(error.description)")
        }
    }

    /// Checks every proof of one credential request without touching any nonce, so a request
    /// refused for a bad proof burns nothing. Errors: `invalid_credential_request` for more
    /// proofs than `batch_size` (§12.2.4), `invalid_proof` for a bad or duplicate proof key or
    /// a missing nonce.
    public func checkKeyProofs(_ jwts: [String], grant: AccessGrant) throws(IssuanceError) -> [KeyProof] {
        guard !jwts.isEmpty else { throw IssuanceError.invalidProof("proofs.jwt must be a non-empty array") }
        guard jwts.count <= configuration.batchSize else {
            throw IssuanceError.invalidCredentialRequest(
                "at most \(configuration.batchSize) proofs per request (batch_credential_issuance.batch_size)")
        }
        let now = clock.now()
        var proofs: [KeyProof] = []
        var seen = Set<String>()
        for (i, jwt) in jwts.enumerated() {
            let proof = try verifyKeyProof(jwt, clientID: grant.clientID, now: now, position: i)
            // §8.3: each key is bound to at most one credential.
            guard seen.insert(proof.thumbprint).inserted else {
                throw IssuanceError.invalidProof("proofs.jwt[\(i)] uses the same key as an earlier proof")
            }
            proofs.append(proof)
        }
        return proofs
    }

    /// Consumes the `c_nonce` of checked proofs inside `db`'s open transaction (§13.4): a
    /// request's proofs normally share one, and each distinct nonce is consumed once. Throws
    /// `invalid_nonce` for an unknown, expired or used nonce, which rolls the caller's
    /// transaction back. The use is recorded under the database lock, so of concurrent
    /// requests carrying one nonce exactly one gets past here.
    func consumeCNonces(of proofs: [KeyProof], in db: Database) throws {
        var nonces: [String] = []
        for proof in proofs { for nonce in proof.nonces where !nonces.contains(nonce) { nonces.append(nonce) } }
        for nonce in nonces {
            guard try consumeCNonce(nonce, in: db) else {
                throw IssuanceError(.invalidNonce, "the c_nonce is unknown, expired or already used; get a new one at the nonce endpoint")
            }
        }
    }

    /// One proof, without touching its nonce. Header: `typ` `openid4vci-proof+jwt`,
    /// `alg` from `keyProofAlgorithms` (never `none` or a MAC), exactly one of `jwk` / `kid` /
    /// `x5c`; a `kid` (a DID URL) cannot be resolved here and is refused, a `jwk` holding
    /// private members is refused. Claims: `aud` = the Credential Issuer Identifier, `iat`
    /// within `configuration.proofWindow` of now, a string `nonce`, and `iss` = the client id,
    /// absent for an anonymous pre-authorized grant.
    func verifyKeyProof(_ jwt: String, clientID: String?, now: Int64, position: Int = 0) throws(IssuanceError) -> KeyProof {
        func refuse(_ why: String) -> IssuanceError { .invalidProof("proofs.jwt[\(position)]: \(why)") }
        let jws: JWS
        let claims: [String: JSONValue]
        do throws(JOSEError) {
            (jws, claims) = try JWS.parseClaims(jwt)
        } catch {
            throw refuse("\(error)")
        }
        // `typ` is compared as a media type by the verification below (RFC 7515 §4.1.9:
        // "application/" may be omitted, case-insensitive); a missing `typ` fails it too.
        let keyHeaders = ["jwk", "kid", "x5c"].filter { jws.header[$0] != nil }
        guard keyHeaders.count == 1 else { throw refuse("exactly one of jwk, kid and x5c must name the key") }
        // Appendix F.1: a `key_attestation` header carries the wallet provider's statement about
        // the key; `kid` is then an index into its `attested_keys` (what EUDI wallets send,
        // "0"), or a `jwk` must be one of them.
        var attestation: KeyAttestation?
        if let header = jws.header["key_attestation"] {
            guard let compact = header.stringValue else { throw refuse("key_attestation must be a compact JWT") }
            attestation = try verifyKeyAttestation(compact, what: "proofs.jwt[\(position)]")
            if let nonce = attestation?.nonce, cNonceTime(nonce, now: now) == nil {
                throw IssuanceError(.invalidNonce, "proofs.jwt[\(position)]: the key attestation's nonce is not a valid c_nonce")
            }
        }
        guard keyHeaders[0] != "kid" || attestation != nil else {
            throw refuse("kid key references (DID URLs) cannot be resolved by this issuer; send the key as jwk or x5c, or kid with a key_attestation")
        }
        let key: JWK
        let publicKey: PublicKey?
        do throws(JOSEError) {
            switch keyHeaders[0] {
            case "jwk":
                let verified = try jws.verifyWithEmbeddedPublicKey(allowList: Self.keyProofAlgorithms, expectedType: Self.keyProofType)
                key = verified.jwk.keyMembersOnly
                publicKey = verified.publicKey
            case "kid":
                let kid = jws.keyID ?? ""
                guard let attested = attestation?.attestedKeys,
                      let index = Int(kid), String(index) == kid, index >= 0, index < attested.count else {
                    throw JOSEError.malformed("kid must be the index of a key in the key attestation's attested_keys")
                }
                key = attested[index]
                publicKey = try key.publicKey()
                try jws.verify(keys: JWKSet(keys: [key.adding(["kid": .string(kid)])]), allowList: Self.keyProofAlgorithms,
                               expectedType: Self.keyProofType)
            default:
                let certified = try Self.x5cLeafKey(jws.header["x5c"]).keyMembersOnly
                try jws.verify(keys: JWKSet(keys: [certified]), allowList: Self.keyProofAlgorithms, expectedType: Self.keyProofType,
                               requireKeyID: false)
                key = certified
                publicKey = nil
            }
        } catch {
            throw refuse("\(error)")
        }
        if let attestation, !attestation.attestedKeys.contains(key) {
            throw refuse("the proof key is not among the key attestation's attested_keys")
        }
        guard let aud = claims["aud"]?.stringValue else { throw refuse("aud must be a string, the Credential Issuer Identifier") }
        guard aud == issuer else { throw refuse("aud must be \(issuer)") }
        guard let iat = claims["iat"]?.intValue else { throw refuse("iat must be a number") }
        guard abs(now - iat) <= configuration.proofWindow else { throw refuse("iat is outside the accepted window") }
        guard let nonce = claims["nonce"]?.stringValue, !nonce.isEmpty else {
            throw refuse("nonce must carry a c_nonce from the nonce endpoint")
        }
        // Appendix F.1: `iss` is optional (EUDI wallets omit it after a pre-authorized token
        // request that named a client_id); when present it must be the grant's client.
        switch (clientID, claims["iss"]) {
        case (_, nil):
            break
        case (nil, .some):
            throw refuse("iss must be omitted: the access token came from an anonymous pre-authorized code")
        case (let clientID?, let iss?):
            guard iss.stringValue == clientID else { throw refuse("iss must be the client_id \(clientID)") }
        }
        return KeyProof(key: key, thumbprint: key.thumbprint(), nonce: nonce, publicKey: publicKey, attestation: attestation)
    }

    /// The key of the first certificate of an `x5c` header (RFC 7515 §4.1.6: base64, not
    /// base64url, DER). The chain is not validated: like a bare `jwk`, the proof shows only
    /// that the wallet holds the key.
    static func x5cLeafKey(_ header: JSONValue?) throws(JOSEError) -> JWK {
        guard let chain = header?.stringArray, let first = chain.first else {
            throw .malformed("x5c must be a non-empty array of strings")
        }
        guard let data = Data(base64Encoded: first) else { throw .malformed("x5c[0] is not base64") }
        do {
            return JWK(publicKey: try Certificate(der: Array(data)).publicKey(), use: nil)
        } catch {
            throw .malformed("x5c[0] is not a usable certificate: \(error)")
        }
    }
}
