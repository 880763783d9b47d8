import Cryptography
import Store

extension FederationHost {
    /// Issued marks and revocations live in the database so the status and list endpoints
    /// answer the same across restarts and for marks issued by an earlier host.
    var trustMarkRepository: TrustMarkRepository { TrustMarkRepository(database: database) }

    func isTrustMarkRevoked(issuer: String, type: String, subject: String) throws(FederationError) -> Bool {
        do {
            return try trustMarkRepository.revocation(issuer: issuer, trustMarkType: type, subject: subject) != nil
        } catch {
            throw .serverError("reading trust mark revocations failed: \(error)")
        }
    }

    /// Remembers a freshly signed mark, so the status endpoint can later tell it from a forgery.
    func recordIssuedTrustMark(_ jwt: String, issuer: String, type: String, subject: String,
                               issuedAt: Int64, expiresAt: Int64) throws(FederationError) {
        let record = TrustMarkRecord(id: TrustMarkID.of(jwt), issuer: issuer, subject: subject, trustMarkType: type,
                                     issuedAt: issuedAt, expiresAt: expiresAt)
        do { try trustMarkRepository.record(record) } catch {
            throw .serverError("recording an issued trust mark failed: \(error)")
        }
    }
}

/// The key a trust mark is stored under: the lowercase hex SHA-256 of its compact JWT, so a
/// lookup needs nothing but the JWT and any altered byte finds no record.
enum TrustMarkID {
    static func of(_ jwt: String) -> String {
        let digits: [Character] = Array("0123456789abcdef")
        var out = ""
        out.reserveCapacity(64)
        for byte in Digest.sha256(Array(jwt.utf8)) {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return out
    }
}
