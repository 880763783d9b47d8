import JOSE
import JSON
import Support

/// Client attestations (OAuth 2.0 Attestation-Based Client Authentication §5.1) whose signature
/// already verified, for `ClientAttestationVerifier`.
///
/// Why: a wallet sends the same attestation, valid for an hour or more, at PAR and at every
/// token request of the instance; parsing it (its `trust_chain` header makes it 10–15 KB) and
/// verifying its ECDSA signature again gives the same answer each time. What is kept is only
/// what depends on nothing but the JWT's bytes: its claims and the key its signature verified
/// with. Everything that depends on time or on trust is checked again on every use by the
/// verifier: `exp`, `nbf` and `iat` against now, and whether the signer is still trusted and
/// still has that key (`AttestationIssuerTrust.signer`, from its own caches). The PoP, which
/// is new on every request, is always verified.
///
/// An entry is found by the JWT's signature segment and used only when the whole JWT is the
/// same string. Failures are not kept. Bounded (`limit` entries; when full, one entry is
/// dropped per insertion), so a client sending ever new attestations cannot grow it.
final class VerifiedClientAttestations: Sendable {
    struct Entry: Sendable {
        let compact: String
        let attester: String
        let subject: String
        let expiresAt: Int64
        let notBefore: Int64?
        let issuedAt: Int64?
        let instanceKey: JWK
        /// The signer as the JWT named it (`x5c` header, `kid`), asked about again on every use.
        let x5c: JSONValue?
        let keyID: String?
        /// RFC 7638 thumbprint of the key the signature verified with.
        let signerThumbprint: String
    }

    let limit: Int
    private let table = Locked<[String: Entry]>([:])

    init(limit: Int = 4_096) { self.limit = max(1, limit) }

    var count: Int { table.read { $0.count } }

    /// The entry for exactly `compact`, if its signature verified before.
    func lookup(_ compact: String) -> Entry? {
        guard let signature = Self.signature(of: compact), let entry = table.read({ $0[signature] }),
              entry.compact == compact else { return nil }
        return entry
    }

    func store(_ entry: Entry) {
        guard let signature = Self.signature(of: entry.compact) else { return }
        table.withLock { table in
            if table[signature] == nil, table.count >= limit { table.remove(at: table.startIndex) }
            table[signature] = entry
        }
    }

    /// The third segment of a compact JWS.
    static func signature(of compact: String) -> String? {
        guard let dot = compact.utf8.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        return String(compact[compact.index(after: dot)...])
    }
}
