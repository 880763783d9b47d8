import Cryptography
import JOSE
import JSON
import SDJWT
import StatusList
import Store
import Support

/// One SD-JWT VC presentation (`<issuer JWT>~<disclosures>~<KB-JWT>`) against its DCQL
/// credential query, check by check into the report (issue 22, item 2): format and type, issuer
/// trust (federation or x5c to configured roots), issuer signature and validity, disclosures,
/// key binding (aud = client id, nonce, sd_hash, iat window), the DCQL claims, the status list.
/// Stops at the first failure: later checks would only repeat it.
extension Verifier {
    func checkSDJWT(_ presentation: JSONValue, query: DCQLQuery.CredentialQuery, request: PresentationRequestRecord,
                    report: inout VerificationReport) -> JSONValue? {
        let name = { (check: String) in "\(query.id).\(check)" }
        guard let text = presentation.stringValue else {
            report.fail(name("format"), "an SD-JWT VC presentation is a string (§8.1)")
            return nil
        }
        let sdJWT: SDJWT
        let jws: JWS
        let payload: [String: JSONValue]
        do {
            sdJWT = try SDJWT.parse(text)
            jws = try sdJWT.parsedIssuerJWT()
            payload = try jws.payload()
        } catch {
            report.fail(name("format"), "not an SD-JWT: \(error)")
            return nil
        }
        guard jws.type == SDJWTIssuer.mediaType else {
            report.fail(name("format"), "issuer JWT typ is \(jws.type ?? "absent"), not \(SDJWTIssuer.mediaType) (SD-JWT VC §3.2.1)")
            return nil
        }
        guard let vct = payload["vct"]?.stringValue, query.types.contains(vct) else {
            report.fail(name("credential_type"), "vct \(payload["vct"]?.stringValue ?? "absent") is not one of \(query.types.joined(separator: ", "))")
            return nil
        }
        report.pass(name("format"), "dc+sd-jwt with \(sdJWT.disclosures.count) disclosures, vct \(vct)")
        guard let issuer = payload["iss"]?.stringValue else {
            report.fail(name("issuer_trust"), "the credential has no iss")
            return nil
        }
        guard let keys = issuerKeys(issuer: issuer, header: jws.header, check: name("issuer_trust"), report: &report) else { return nil }

        let policy = SDJWTVerificationPolicy(now: clock.now(), allowList: [.ES256, .ES384, .ES512])
        let verified: VerifiedSDJWT
        do {
            verified = try sdJWT.verify(issuerKeys: keys, policy: policy)
        } catch {
            switch error {
            case .jose: report.fail(name("issuer_signature"), "\(error)")
            case .malformed(let why) where why.hasPrefix("expired") || why.hasPrefix("not yet valid"):
                report.fail(name("validity"), why)
            default: report.fail(name("disclosures"), "\(error)")
            }
            return nil
        }
        report.pass(name("issuer_signature"), "\(jws.algorithm ?? "") signature by \(issuer) verifies; exp/nbf hold")
        report.pass(name("disclosures"), "\(verified.disclosed.count) disclosures, each referenced once by its digest")

        // Key binding (RFC 9901 §7.3) with this request's audience and nonce.
        let expectation = KeyBindingExpectation(audience: request.clientID, nonce: request.nonce,
                                                maximumAge: configuration.keyBindingMaxAge)
        do {
            _ = try sdJWT.verifyKeyBinding(of: verified, expectation: expectation, policy: policy)
        } catch {
            report.fail(name("key_binding"), "\(error)")
            return nil
        }
        report.pass(name("key_binding"), "KB-JWT by cnf.jwk: aud = \(request.clientID), nonce and sd_hash match, iat within \(configuration.keyBindingMaxAge) s")

        guard checkClaims(verified, query: query, check: name("claims"), report: &report) else { return nil }
        guard checkStatus(verified.claims["status"], keys: keys, check: name("status"), report: &report) else { return nil }

        var claims = verified.claims
        for technical in ["cnf", "status", "_sd_alg"] { claims[technical] = nil }
        return .object(claims)
    }

    /// DCQL `claims` and `claim_sets` (§6.3, §6.4.1): see `DCQLClaimMatching.check`.
    private func checkClaims(_ verified: VerifiedSDJWT, query: DCQLQuery.CredentialQuery, check: String,
                             report: inout VerificationReport) -> Bool {
        let (ok, detail) = DCQLClaimMatching.check(query, claims: .object(verified.claims), disclosed: verified.disclosed.map(\.path))
        if ok { report.pass(check, detail) } else { report.fail(check, detail) }
        return ok
    }

    /// Token Status List §8: the entry at `idx` of the list at `uri` must be VALID (0x00).
    func checkStatus(_ status: JSONValue?, keys: JWKSet, check: String, report: inout VerificationReport) -> Bool {
        guard let status else {
            report.pass(check, "the credential names no status list")
            return true
        }
        do {
            let reference = try StatusReference(claim: status)
            let (token, cached) = try statusLists.token(uri: reference.uri, keys: keys, now: clock.now())
            let value = try token.list.status(at: reference.index)
            let source = cached ? "cached" : "fetched"
            guard value.rawValue == 0 else {
                let meaning = value.rawValue == 1 ? "INVALID (revoked)" : value.rawValue == 2 ? "SUSPENDED" : "status \(value.rawValue)"
                report.fail(check, "\(reference.uri) index \(reference.index): \(meaning) (\(source))")
                return false
            }
            report.pass(check, "\(reference.uri) index \(reference.index): VALID (\(source), ttl \(token.timeToLive.map { "\($0) s" } ?? "none"))")
            return true
        } catch {
            report.fail(check, "the status list cannot be checked: \(error)")
            return false
        }
    }

    /// The issuer's keys: from its `openid_credential_issuer` `jwks` when its trust chain reaches
    /// one of the verifier's Trust Anchors, else from `x5c` when it chains to a configured root
    /// (and names the issuer in its SAN, SD-JWT VC §3.5). nil, with the reasons, otherwise.
    func issuerKeys(issuer: String, header: [String: JSONValue], check: String, report: inout VerificationReport) -> JWKSet? {
        var reasons: [String] = []
        // No trust_anchors configured: the composition root uses those the verifier's own
        // authority hints reach.
        if let issuerTrust {
            do {
                let (metadata, anchor) = try issuerTrust.resolvedMetadata(entityID: issuer, trustAnchors: trustAnchors)
                guard let jwks = metadata["openid_credential_issuer"]?["jwks"] else {
                    throw VerificationError.invalidRequest("\(issuer) has no jwks in its openid_credential_issuer metadata")
                }
                let set = try JWKSet(json: jwks)
                report.pass(check, "trust chain from \(issuer) to \(anchor); \(set.keys.count) keys from its openid_credential_issuer jwks")
                return set
            } catch {
                reasons.append("federation: \(error)")
            }
        } else {
            reasons.append("federation: this server runs no federation")
        }
        if let x5c = header["x5c"]?.stringArray, !x5c.isEmpty {
            if issuerRoots.isEmpty {
                reasons.append("x5c: no issuer_roots configured")
            } else {
                do {
                    let chain = try Certificate.chain(x5c: x5c)
                    try Certificate.verifyChain(leaf: chain[0], intermediates: Array(chain.dropFirst()), roots: issuerRoots, at: clock.now())
                    let names = chain[0].subjectAlternativeNames ?? []
                    let host = (try? URIReference(parsing: issuer))?.normalizedHost
                    guard names.contains(.uri(issuer)) || host.map({ names.contains(.dns($0)) }) == true else {
                        throw VerificationError.invalidRequest("the x5c leaf does not name \(issuer) in its subjectAltName")
                    }
                    let set = JWKSet(keys: [JWK(publicKey: try chain[0].publicKey())])
                    report.pass(check, "x5c chains to a configured issuer root (\(chain[0].subjectText))")
                    return set
                } catch {
                    reasons.append("x5c: \(error)")
                }
            }
        }
        report.fail(check, "\(issuer) is not trusted: " + reasons.joined(separator: "; "))
        return nil
    }
}
