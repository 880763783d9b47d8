@testable import Store
import XCTest

/// `NonceRepository.purge` removes the `jti`s past their expiry page by page: every expired
/// one goes whatever page it falls in, and nothing else.
final class NonceRepositoryPurgeTests: XCTestCase {
    func testPagedPurgeRemovesExactlyTheExpired() throws {
        let database = try Database(path: ":memory:")
        let nonces = NonceRepository(database: database)
        var kept: Set<String> = []
        var expired = 0
        for issuer in ["https://a", "https://b"] {
            for purpose in ["c_nonce", "dpop"] {
                for n in 0..<7 {
                    let jti = "\(purpose)-\(n)"
                    let expiresAt: Int64 = n % 3 == 0 ? 200 : 100
                    XCTAssertTrue(try nonces.recordJTI(issuer: issuer, purpose: purpose, jti: jti, expiresAt: expiresAt))
                    if expiresAt > 150 { kept.insert("\(issuer) \(jti)") } else { expired += 1 }
                }
            }
        }
        // Pages of 2 and 3 keys end inside and between issuers and purposes.
        for pageSize in [3, 2] {
            XCTAssertEqual(try nonces.purge(now: 150, pageSize: pageSize), pageSize == 3 ? expired : 0)
        }
        let left = try database.query("SELECT issuer, jti FROM issuance_jtis")
            .map { "\($0.text("issuer") ?? "") \($0.text("jti") ?? "")" }
        XCTAssertEqual(Set(left), kept)
        XCTAssertEqual(try nonces.purge(now: 250, pageSize: 4), kept.count)
        XCTAssertTrue(try database.query("SELECT 1 FROM issuance_jtis").isEmpty)
    }
}
