import Foundation
import JSON

/// One entry of `credential_previews` in the NL wallet's own wire format (`token_claims_preview:
/// "nl"`), as its `wallet_core` deserializes `openid4vc::token::CredentialPreview` at
/// MinBZK/nl-wallet commit 15308eedc9ee0649cbb23b4250a1ffbb19f77a50 (main, 2026-07-21, the last
/// one whose preview carries `batch_size`; docs/pid-provider.md says which versions read it where):
///
/// ```
/// { "config_id": <credential configuration id>, "format": "dc+sd-jwt" | "mso_mdoc",
///   "batch_size": <1...255: how many copies the wallet will ask for>,
///   "credential_payload": { "vct", "iss", "attestation_qualification", <attributes...> },
///   "issuer_certificate": <standard base64 (padded) of the signer's DER certificate> }
/// ```
///
/// `credential_payload` is their `PreviewableCredentialPayload`: `vct` (the attestation type, the
/// doctype for mdoc), `iss`, the optional `exp`/`nbf` (left out: the technical validity is fixed
/// only when the credential is signed, and their wallet compares the issued credential with the
/// preview), `attestation_qualification` (`QEAA`, as their PID issuer's example configures) and
/// the attributes flattened beside them, format-independent: their mdoc mapping puts the
/// elements of the nameSpace that equals the doctype at the root and those of `<doctype>.<group>`
/// under `group` (`mdocAttributes`). Ours has one more nameSpace that is not under the doctype (the domestic one,
/// with `recovery_code`), so its elements sit under an object named after the whole nameSpace.
/// Their attribute values are null, integers, booleans, text, arrays and objects: the PID's
/// claims are all of those.
struct NLCredentialPreview {
    /// The qualification their PID issuer's example configuration gives the PID.
    static let attestationQualification = "QEAA"

    let configurationID: String
    let format: String
    let batchSize: Int
    let payload: [String: JSONValue]
    let issuerCertificate: [UInt8]

    var json: JSONValue {
        [
            "config_id": .string(configurationID), "format": .string(format), "batch_size": .int(Int64(batchSize)),
            "credential_payload": .object(payload),
            "issuer_certificate": .string(Data(issuerCertificate).base64EncodedString()),
        ]
    }

    var fragment: JSONFragment { JSONFragment(json) }

    /// The attributes of an mdoc preview (`{nameSpace: {element: value}}`): the doctype's own
    /// nameSpace at the root, `<doctype>.<a>.<b>` under `a` then `b` (their groups), any other
    /// nameSpace under its whole name.
    static func mdocAttributes(_ nameSpaces: [String: JSONValue], docType: String) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for (nameSpace, elements) in nameSpaces.sorted(by: { $0.key < $1.key }) {
            let groups: [String]
            if nameSpace == docType {
                groups = []
            } else if nameSpace.hasPrefix(docType + ".") {
                groups = nameSpace.dropFirst(docType.count + 1).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            } else {
                groups = [nameSpace]
            }
            for (name, value) in elements.objectValue ?? [:] { insert(value, at: groups + [name], into: &out) }
        }
        return out
    }

    private static func insert(_ value: JSONValue, at path: [String], into object: inout [String: JSONValue]) {
        guard let first = path.first else { return }
        if path.count == 1 { object[first] = value; return }
        var inner = object[first]?.objectValue ?? [:]
        insert(value, at: Array(path.dropFirst()), into: &inner)
        object[first] = .object(inner)
    }
}


extension PIDProvider {
    /// The NL wallet's preview of the credential `configuration` will give `persona` (see
    /// `NLCredentialPreview`): the same claims as Trustbed's own preview, in their shape, with the
    /// certificate that will sign it (the credential signer for SD-JWT VC, the document signer for mdoc).
    func nlCredentialPreview(for persona: Persona, configuration c: CredentialConfiguration,
                             issuedAt: Int64) -> NLCredentialPreview {
        let claims = prepared(persona, c, issuedAt, issuedAt + configuration.credentialLifetime).preview.objectValue ?? [:]
        var payload: [String: JSONValue]
        let certificate: [UInt8]
        switch c.format {
        case .sdJWT:
            payload = claims
            certificate = keys.credentialSigner.der
        case .mdoc:
            payload = NLCredentialPreview.mdocAttributes(claims, docType: c.type)
            certificate = keys.documentSigner.der
        }
        payload["vct"] = .string(c.type)
        payload["iss"] = .string(issuer)
        payload["attestation_qualification"] = .string(NLCredentialPreview.attestationQualification)
        return NLCredentialPreview(configurationID: c.id, format: c.format.rawValue, batchSize: configuration.batchSize,
                                   payload: payload, issuerCertificate: certificate)
    }
}
