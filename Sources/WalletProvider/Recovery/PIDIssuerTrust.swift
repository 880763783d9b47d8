import Cryptography
import JOSE
import JSON
import Support

extension WalletProvider {
    /// The keys of the PID issuer `issuer` (issue 21, item 2): its `openid_credential_issuer`
    /// `jwks` when its trust chain reaches one of this provider's Trust Anchors (the PID
    /// Providers publish them there), else the `x5c` leaf's key when the chain of `x5c` ends at
    /// one of `pid_issuer_roots` and the leaf names the issuer in its subjectAltName (SD-JWT VC
    /// §3.5). Neither: 403 `invalid_request` with the reasons.
    func pidIssuerKeys(issuer: String, header: [String: JSONValue], now: Int64) throws(WalletProviderError) -> JWKSet {
        var reasons: [String] = []
        if let pidIssuerMetadata {
            do {
                let metadata = try pidIssuerMetadata(issuer)
                guard let jwks = metadata["openid_credential_issuer"]?["jwks"] else {
                    throw WalletProviderError.refused("\(issuer) publishes no jwks in its openid_credential_issuer metadata")
                }
                return try JWKSet(json: jwks)
            } catch {
                reasons.append("federation: \(error)")
            }
        } else {
            reasons.append("federation: none on this server")
        }
        if let x5c = header["x5c"]?.stringArray, !x5c.isEmpty, !pidIssuerRoots.isEmpty {
            do {
                let chain = try Certificate.chain(x5c: x5c)
                try Certificate.verifyChain(leaf: chain[0], intermediates: Array(chain.dropFirst()), roots: pidIssuerRoots, at: now)
                let names = chain[0].subjectAlternativeNames ?? []
                let host = (try? URIReference(parsing: issuer))?.normalizedHost
                guard names.contains(.uri(issuer)) || host.map({ names.contains(.dns($0)) }) == true else {
                    throw WalletProviderError.refused("the x5c leaf does not name \(issuer)")
                }
                return JWKSet(keys: [JWK(publicKey: try chain[0].publicKey())])
            } catch {
                reasons.append("x5c: \(error)")
            }
        } else {
            reasons.append(pidIssuerRoots.isEmpty ? "x5c: no pid_issuer_roots configured" : "x5c: none in the PID")
        }
        throw .refused("the PID's issuer \(issuer) is not trusted: " + reasons.joined(separator: "; "))
    }
}
