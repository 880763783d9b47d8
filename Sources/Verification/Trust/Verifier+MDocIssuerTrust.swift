import Cryptography
import JOSE

extension Verifier {
    /// IACA roots for a document signer: the issuer it names (subjectAltName URI) trusted through
    /// the federation, with its IACA from `<issuer>/iaca.pem` and its jwks for the status list,
    /// else the configured `issuer_roots`; nil (and `check` failed) when neither vouches for it.
    /// Used by OpenID4VP presentations and PixelPass alike.
    func mdocIssuerRoots(signer: Certificate, check: String, report: inout VerificationReport) -> ([Certificate], JWKSet?)? {
        let issuer = (signer.subjectAlternativeNames ?? []).compactMap { if case .uri(let u) = $0 { u } else { nil } }.first
        var reasons: [String] = []
        if let issuer, let issuerTrust, let iacas {
            do {
                let (metadata, anchor) = try issuerTrust.resolvedMetadata(entityID: issuer, trustAnchors: trustAnchors)
                let roots = try iacas.iacaCertificates(issuer: issuer)
                let keys = metadata["openid_credential_issuer"]?["jwks"].flatMap { try? JWKSet(json: $0) }
                report.pass(check, "trust chain from \(issuer) to \(anchor); IACA from \(issuer)/iaca.pem")
                return (roots + issuerRoots, keys)
            } catch {
                reasons.append("federation: \(error)")
            }
        } else {
            reasons.append(issuer == nil ? "the document signer names no issuer URI" : "this server runs no federation")
        }
        guard !issuerRoots.isEmpty else {
            report.fail(check, "\(issuer ?? signer.subjectText) is not trusted: " + reasons.joined(separator: "; ")
                        + "; x5chain: no issuer_roots configured")
            return nil
        }
        report.pass(check, "the document signer is checked against the configured issuer_roots")
        return (issuerRoots, nil)
    }
}
