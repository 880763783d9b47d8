import JSON

/// The credential request of MOSIP Inji's VCI client (`inji-vci-client`, the Inji Wallet's
/// OpenID4VCI library, and MOSIP's `mimoto` `VCCredentialRequest`): the shape of OpenID4VCI
/// draft 13 §7.2 and Appendix A, before 1.0 replaced `format` + a type selector by
/// `credential_configuration_id` and the singular `proof` by `proofs`:
///
///     {"format": "vc+sd-jwt" | "dc+sd-jwt", "vct": "...", "proof": {"proof_type": "jwt", "jwt": "..."}}
///     {"format": "mso_mdoc", "doctype": "...", "proof": {...}}
///     {"format": "vc+sd-jwt", "credential_definition": {"vct" | "type": ...}, "proof": {...}}
///
/// Read only when `services.pid_provider.inji_compat` is on, and only for a request that names
/// neither `credential_configuration_id` nor `credential_identifier` (a 1.0 request is never read
/// this way). It is mapped onto the 1.0 request: the one configuration of that format and type,
/// and the proof as a one-element `proofs.jwt`, so everything after decoding (grant, proof,
/// nonce, issuance) is the 1.0 path unchanged.
extension CredentialRequest {
    /// Draft-13 format identifiers and the 1.0 configuration format they ask for. `vc+sd-jwt` is
    /// SD-JWT VC's media type before draft 06 renamed it `dc+sd-jwt`; Inji sends both.
    static let injiFormats: [String: CredentialConfiguration.Format] = [
        "vc+sd-jwt": .sdJWT, "dc+sd-jwt": .sdJWT, "mso_mdoc": .mdoc,
    ]

    /// True when `object` is Inji's shape rather than a 1.0 request.
    static func isInjiShape(_ object: [String: JSONValue]) -> Bool {
        object["format"] != nil && object["credential_configuration_id"] == nil && object["credential_identifier"] == nil
    }

    /// Maps Inji's request onto the configuration it names among `configurations`.
    static func parseInji(_ object: [String: JSONValue], configurations: [CredentialConfiguration])
        throws(IssuanceError) -> CredentialRequest {
        guard let formatName = object["format"]?.stringValue else { throw .invalidCredentialRequest("format must be a string") }
        guard let format = injiFormats[formatName] else {
            // Draft 13 §7.3.1.2 named this `unsupported_credential_format`; 1.0 has no such code,
            // and a format this issuer has no configuration for is an unknown configuration.
            throw IssuanceError(.unknownCredentialConfiguration,
                                "format \(formatName) is not issued here (inji_compat reads vc+sd-jwt, dc+sd-jwt and mso_mdoc)")
        }
        let type = try injiType(object, format: format, formatName: formatName)
        guard let configuration = configurations.first(where: { $0.format == format && $0.type == type }) else {
            let what = format == .mdoc ? "doctype" : "vct"
            throw IssuanceError(.unknownCredentialConfiguration, "no \(formatName) credential configuration has \(what) \(type)")
        }
        if object["proofs"] != nil, object["proof"] != nil {
            throw .invalidCredentialRequest("proof and proofs must not both be present")
        }
        let proofs: Proofs
        if let proof = object["proof"] {
            proofs = try injiProof(proof)
        } else {
            proofs = try Self.proofs(object["proofs"])
        }
        let responseEncryption = try object["credential_response_encryption"].map(ResponseEncryption.parse)
        return CredentialRequest(target: .configuration(configuration.id), proofs: proofs, responseEncryption: responseEncryption)
    }

    /// The type selector of the format: `doctype` for mdoc (draft 13 A.2.4), `vct` for SD-JWT VC
    /// (A.3.4), or the `vct` (or one `type` entry) of a `credential_definition` as Inji's
    /// W3C-style requests carry it. Exactly one selector, matching the format.
    private static func injiType(_ object: [String: JSONValue], format: CredentialConfiguration.Format, formatName: String)
        throws(IssuanceError) -> String {
        switch format {
        case .mdoc:
            guard object["vct"] == nil, object["credential_definition"] == nil else {
                throw .invalidCredentialRequest("an mso_mdoc request names its doctype, not vct or credential_definition")
            }
            guard let doctype = try optionalString(object, "doctype") else { throw .invalidCredentialRequest("doctype is required for mso_mdoc") }
            return doctype
        case .sdJWT:
            guard object["doctype"] == nil else { throw .invalidCredentialRequest("a \(formatName) request names a vct, not a doctype") }
            let vct = try optionalString(object, "vct")
            guard let definition = object["credential_definition"] else {
                guard let vct else { throw .invalidCredentialRequest("vct (or credential_definition) is required for \(formatName)") }
                return vct
            }
            guard vct == nil else { throw .invalidCredentialRequest("vct and credential_definition must not both be present") }
            guard let members = definition.objectValue else { throw .invalidCredentialRequest("credential_definition must be an object") }
            if let inner = members["vct"] {
                guard let text = inner.stringValue, !text.isEmpty else {
                    throw .invalidCredentialRequest("credential_definition.vct must be a non-empty string")
                }
                return text
            }
            guard let types = members["type"]?.arrayValue?.compactMap(\.stringValue), !types.isEmpty else {
                throw .invalidCredentialRequest("credential_definition needs vct or a non-empty type array")
            }
            // W3C-style `type` lists carry generic entries ("VerifiableCredential"); the last is
            // the specific one by convention.
            return types[types.count - 1]
        }
    }

    /// Draft 13 §7.2.1: `{"proof_type": "jwt", "jwt": "<key proof>"}`, read as one `proofs.jwt`.
    private static func injiProof(_ value: JSONValue) throws(IssuanceError) -> Proofs {
        guard let object = value.objectValue else { throw .invalidCredentialRequest("proof must be an object") }
        guard let type = object["proof_type"]?.stringValue else { throw .invalidProof("proof.proof_type must be a string") }
        guard type == "jwt" else { throw .invalidProof("proof_type \(type) is not supported; use jwt") }
        guard let jwt = object["jwt"]?.stringValue, !jwt.isEmpty else { throw .invalidProof("proof.jwt must be a string (a JWT)") }
        return .jwt([jwt])
    }
}
