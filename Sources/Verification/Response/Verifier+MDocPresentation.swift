import CBOR
import Cryptography
import JOSE
import JSON
import MDoc
import StatusList
import Store
import Support

/// One mso_mdoc presentation (OpenID4VP 1.0 Appendix B.2: a base64url DeviceResponse) against
/// its DCQL credential query: issuer trust (the document signer's issuer through the federation,
/// its IACA from `<issuer>/iaca.pem`, or the configured `issuer_roots`), then ISO 18013-5's issuer
/// and device authentication with the OpenID4VP SessionTranscript (B.2.6.1), the DCQL claims and
/// the status list.
extension Verifier {
    func checkMDoc(_ presentation: JSONValue, query: DCQLQuery.CredentialQuery, request: PresentationRequestRecord,
                   encrypted: Bool, report: inout VerificationReport) -> JSONValue? {
        let name = { (check: String) in "\(query.id).\(check)" }
        guard let text = presentation.stringValue, let bytes = Base64URL.decode(text) else {
            report.fail(name("format"), "an mso_mdoc presentation is a base64url DeviceResponse (Appendix B.2.4)")
            return nil
        }
        let response: DeviceResponse
        let signer: Certificate
        do {
            response = try DeviceResponse(decoding: bytes)
            guard let document = response.documents.first else { throw MDocError.malformed("no documents") }
            signer = try documentSigners.signer(of: document.issuerSigned)
        } catch {
            report.fail(name("format"), "not a DeviceResponse: \(error)")
            return nil
        }
        report.pass(name("format"), "mso_mdoc DeviceResponse, \(bytes.count) bytes")

        // The issuer: the URI the document signer names (its subjectAltName, as the PID Provider's do).
        guard let (roots, statusKeys) = mdocIssuerRoots(signer: signer, check: name("issuer_trust"), report: &report) else { return nil }

        // B.2.6.1: the handover binds client id, nonce, the encryption key's thumbprint
        // (direct_post.jwt) and the response_uri.
        let thumbprint = encrypted ? Base64URL.decode(keys.encryptionJWK.thumbprint()) : nil
        let transcript = SessionTranscript.openID4VP(clientID: request.clientID, nonce: request.nonce, jwkThumbprint: thumbprint,
                                                     responseURI: urls.response)
        var verifier = DeviceResponseVerifier(trustAnchors: roots, expectedDocType: query.types[0])
        verifier.chains = documentSigners.chains
        let result = verifier.verify(response, sessionTranscript: transcript, at: clock.now())
        for check in result.checks {
            if check.ok { report.pass(name(check.name), check.detail) } else { report.fail(name(check.name), check.detail) }
        }
        guard result.verified, let document = result.documents.first else { return nil }

        // DCQL claims (§6.3, §7.2: [namespace, element]) and claim_sets: one option answered, nothing else disclosed.
        let elements = JSONValue.object(document.elements.mapValues { .object($0.mapValues(VerificationReport.json)) })
        let places = document.elements.flatMap { ns, items in items.keys.sorted().map { JSONPath(ns, $0) } }
        let (ok, detail) = DCQLClaimMatching.check(query, claims: elements, disclosed: places)
        guard ok else {
            report.fail(name("claims"), detail)
            return nil
        }
        report.pass(name("claims"), detail)

        if let status = document.status {
            guard let keys = statusKeys else {
                report.fail(name("status"), "the status list cannot be checked: the issuer's keys come only from the federation")
                return nil
            }
            do {
                let (token, cached) = try statusLists.token(uri: status.uri, keys: keys, now: clock.now())
                let value = try token.list.status(at: Int(status.index))
                guard value.rawValue == 0 else {
                    report.fail(name("status"), "\(status.uri) index \(status.index): \(value.rawValue == 1 ? "INVALID (revoked)" : "status \(value.rawValue)") (\(cached ? "cached" : "fetched"))")
                    return nil
                }
                report.pass(name("status"), "\(status.uri) index \(status.index): VALID (\(cached ? "cached" : "fetched"))")
            } catch {
                report.fail(name("status"), "the status list cannot be checked: \(error)")
                return nil
            }
        } else {
            report.pass(name("status"), "the MSO names no status list")
        }
        return elements
    }
}
