import CBOR
import COSE
import Cryptography
import Foundation
import JOSE
import JSON
import MDoc
import SDJWT
import StatusList
import Support

extension PIDProvider {
    /// The claims the credential will carry, as JSON, in the configuration's own naming (SD-JWT VC claim names for
    /// dc+sd-jwt; for mso_mdoc an object {namespace: {elementIdentifier: value-as-JSON}}, recovery_code in the
    /// domestic namespace), including recovery_code;
    /// used for the token response's `credential_previews` (item 9). Excludes iss/iat/cnf/status.
    ///
    /// For dc+sd-jwt the object also carries `vct` (so a wallet can tell previews apart) but not
    /// the technical validity (`nbf`, `exp`), which is fixed only when the credential is signed.
    public func credentialClaims(for persona: Persona, configuration: CredentialConfiguration, issuedAt: Int64,
                                 expiresAt: Int64) -> JSONValue {
        prepared(persona, configuration, issuedAt, expiresAt).preview
    }

    /// `credentialClaims` with its JSON text, for the token response.
    func credentialClaimsFragment(for persona: Persona, configuration: CredentialConfiguration, issuedAt: Int64,
                                  expiresAt: Int64) -> JSONFragment {
        prepared(persona, configuration, issuedAt, expiresAt).previewFragment
    }

    /// Signs one credential bound to `holderKey` (the proof's public JWK): a compact SD-JWT VC (`<jwt>~<disclosures>~`)
    /// for dc+sd-jwt, base64url(no padding) of the CBOR IssuerSigned for mso_mdoc. `holderPublicKey`, when given, is
    /// `holderKey` already imported (and checked) by the proof's verification.
    public func issueCredential(persona: Persona, configuration: CredentialConfiguration, holderKey: JWK,
                                holderPublicKey: PublicKey? = nil, status: StatusReference, issuedAt: Int64,
                                expiresAt: Int64) throws(IssuanceError) -> String {
        guard expiresAt > issuedAt else { throw .serverError("credential expiry is not after its issuance") }
        guard status.index >= 0 else { throw .serverError("negative status list index") }
        let claims = prepared(persona, configuration, issuedAt, expiresAt)
        switch configuration.format {
        case .sdJWT:
            return try sdJWT(claims, configuration, holderKey, status, issuedAt, expiresAt)
        case .mdoc:
            return try mdoc(claims, configuration, holderKey, holderPublicKey, status, issuedAt, expiresAt)
        }
    }

    /// The claims of a PID for `persona` at `issuedAt`, made once per persona, configuration
    /// and day (see `PreparedClaims`).
    func prepared(_ persona: Persona, _ configuration: CredentialConfiguration, _ issuedAt: Int64,
                  _ expiresAt: Int64) -> PreparedClaims {
        let key = PreparedClaimsCache.Key(persona: persona.id, configuration: configuration.id, issuedAt: issuedAt,
                                          expiresAt: expiresAt)
        return preparedClaims.claims(for: key) {
            PreparedClaims(claimSet(persona, configuration, issuedAt, expiresAt), configuration: configuration,
                           domesticNameSpace: self.configuration.domesticNameSpace(for: configuration))
        }
    }

    private func claimSet(_ persona: Persona, _ configuration: CredentialConfiguration, _ issuedAt: Int64,
                          _ expiresAt: Int64) -> PIDClaimSet {
        PIDClaimSet(persona: persona, profile: configuration.format == .sdJWT ? configuration.profile : .eudi,
                    issuingAuthority: self.configuration.issuingAuthority, issuingCountry: self.configuration.issuingCountry,
                    recoveryCode: recoveryCode(for: persona), issuedAt: issuedAt, expiresAt: expiresAt)
    }

    /// SD-JWT VC (draft-ietf-oauth-sd-jwt-vc §3.2) under HAIP 1.0 §6.1: `typ: dc+sd-jwt`, ES256,
    /// `x5c` = [credential signer] without the IACA root (verifiers hold the root), `iss` = the
    /// credential issuer, `cnf.jwk` = the proof key (RFC 7800), `status.status_list` (Token Status
    /// List §6.1). The number of decoy digests varies per credential (RFC 9901 §4.2.5), so the
    /// length of `_sd` does not reveal how many claims a persona has.
    private func sdJWT(_ set: PreparedClaims, _ configuration: CredentialConfiguration, _ holderKey: JWK,
                       _ status: StatusReference, _ issuedAt: Int64, _ expiresAt: Int64) throws(IssuanceError) -> String {
        let added: [String: JSONValue] = [
            "iss": .string(issuer), "iat": .int(issuedAt), "nbf": .int(issuedAt), "exp": .int(expiresAt),
            "vct": .string(configuration.type), "cnf": ["jwk": holderKey.jsonValue], "status": status.claim,
        ]
        let signer = keys.sdJWTIssuer.withDecoys(Int.random(in: 1...4))
        do {
            guard let template = set.sdJWTPayload else { throw SDJWTError.invalidPlan("no SD-JWT claims were prepared") }
            return try signer.issueCompact(template: template.get(), adding: added)
        } catch {
            throw .serverError("cannot sign the SD-JWT VC: \(error)")
        }
    }

    /// ISO/IEC 18013-5 IssuerSigned (OpenID4VCI 1.0 Appendix A.2.4: base64url of its CBOR): the
    /// nameSpace named like the docType (Rulebook: `eu.europa.ec.eudi.pid.1` for both) and the
    /// domestic one with the recovery code (ARF Annex 2 PID_06), the MSO
    /// bound to the proof key as a COSE_Key, validity = the credential's technical validity, and
    /// the status list reference in the MSO (Token Status List §6.3).
    private func mdoc(_ set: PreparedClaims, _ configuration: CredentialConfiguration, _ holderKey: JWK,
                      _ holderPublicKey: PublicKey?, _ status: StatusReference, _ issuedAt: Int64,
                      _ expiresAt: Int64) throws(IssuanceError) -> String {
        let deviceKey: COSEKey
        do {
            deviceKey = try COSEKey(publicKey: holderPublicKey ?? holderKey.publicKey())
        } catch {
            throw .invalidProof("the proof key cannot be an mdoc device key: \(error)")
        }
        do {
            let signer = try keys.documentSignerForMDoc()
            let issued = try IssuerSigned.issue(
                docType: configuration.type, elements: set.mdocElements, deviceKey: deviceKey,
                validity: ValidityInfo(signed: issuedAt, validFrom: issuedAt, validUntil: expiresAt),
                status: StatusListReference(index: UInt64(status.index), uri: status.uri), signer: signer)
            return issued.base64URL
        } catch {
            throw .serverError("cannot sign the mdoc: \(error)")
        }
    }
}
