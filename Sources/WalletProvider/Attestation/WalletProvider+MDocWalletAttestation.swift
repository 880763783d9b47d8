import CBOR
import COSE
import JOSE
import JSON
import MDoc

/// The wallet attestation as an ISO/IEC 18013-5 mdoc (issue 20, item 6, the `mso_mdoc` entry of
/// `<wp>/wallet-attestations`), the third form the IT-Wallet texts give it beside the JWT and the
/// SD-JWT VC: an `IssuerSigned` whose MSO binds the wallet key (`cnf.jwk` as the COSE_Key
/// `deviceKey`) and whose items carry the same claims.
extension WalletProvider {
    /// The docType IT-Wallet gives the mdoc wallet attestation.
    public static let mdocWalletAttestationDocType = "org.iso.18013.5.1.it.WalletAttestation"
    /// Its one nameSpace: the docType's, as ISO/IEC 18013-5 §7.1 names the mDL's
    /// (`org.iso.18013.5.1.mDL` → `org.iso.18013.5.1`), so Italian elements share the prefix.
    public static let mdocWalletAttestationNameSpace = "org.iso.18013.5.1.it"

    /// base64url (no padding) of the IssuerSigned CBOR, as OpenID4VCI 1.0 Appendix A.2.4 encodes
    /// an `mso_mdoc` credential. Items `iss`, `sub`, `aal`, `wallet_name` (and `wallet_link`
    /// when configured), in that order; `iat` and `exp` are the MSO's `validityInfo` (`signed`
    /// = `validFrom` = `iat`, `validUntil` = `exp`); the issuerAuth is signed ES256 by the
    /// provider's signing key with `x5chain` = the signing certificate (no root), like `x5c`.
    func signMDocWalletAttestation(key: JWK, thumbprint: String, now: Int64) throws(WalletProviderError) -> String {
        let claims = attestationClaims(key: key, thumbprint: thumbprint, now: now)
        var items: [(identifier: String, value: CBORValue)] = []
        for name in ["iss", "sub", "aal", "wallet_name", "wallet_link"] {
            if let text = claims[name]?.stringValue { items.append((name, .text(text))) }
        }
        do {
            let signer = try DocumentSigner(key: keys.signingKey, certificateChain: [keys.signer])
            let issued = try IssuerSigned.issue(
                docType: Self.mdocWalletAttestationDocType, nameSpaces: [Self.mdocWalletAttestationNameSpace: items],
                deviceKey: COSEKey(publicKey: key.publicKey()),
                validity: ValidityInfo(signed: now, validFrom: now, validUntil: now + configuration.attestationLifetime),
                signer: signer)
            return issued.base64URL
        } catch {
            throw WalletProviderError(.serverError, "the mdoc wallet attestation could not be signed", cause: "\(error)")
        }
    }
}
