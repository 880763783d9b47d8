import CBOR
import JSON
import MDoc
import SDJWT
import Support

/// What every PID issued to one persona in one configuration on one UTC day has in common:
/// the claims (with the day's administrative dates and ages), the SD-JWT VC disclosure plan or
/// the mdoc elements (the portrait already decoded from its data URL), and the token
/// response's preview. Salts, decoys, keys, status and the technical validity stay per
/// issuance. Prepared once rather than on every token response (preview) and credential, where
/// the portrait alone was decoded from base64 twice and re-encoded for the preview
/// (docs/performance.md).
struct PreparedClaims: Sendable {
    /// SD-JWT VC claim name → value, without `vct` and the technical claims.
    let claims: [String: JSONValue]
    /// `claims` with every claim selectively disclosable (`PIDClaimSet.disclosurePlan`),
    /// compiled for the SD-JWT issuer (or why they cannot be); dc+sd-jwt only. Compiled once, not
    /// per credential: that walks, copies and serializes ~35 claims each time (see
    /// `SDJWTPayloadTemplate`).
    let sdJWTPayload: Result<SDJWTPayloadTemplate, SDJWTError>?
    /// The mdoc elements in the Rulebook's table order, their values encoded, by nameSpace (the
    /// docType's and the domestic one); mso_mdoc only.
    let mdocElements: [String: [IssuerSignedElement]]
    /// `credential_previews[].claims` of the token response (see `credentialClaims`), and its
    /// JSON text, serialized once here rather than in every token response (see JSONFragment).
    let preview: JSONValue
    let previewFragment: JSONFragment

    /// `domesticNameSpace`: where an mdoc's national additions go (`IssuerConfiguration.domesticNameSpace`).
    init(_ set: PIDClaimSet, configuration: CredentialConfiguration, domesticNameSpace: String) {
        claims = set.claims
        switch configuration.format {
        case .sdJWT:
            let plan = set.disclosurePlan
            sdJWTPayload = Result { () throws(SDJWTError) in try SDJWTPayloadTemplate(claims: set.claims, plan: plan) }
            mdocElements = [:]
            var previewClaims = set.claims
            previewClaims["vct"] = .string(configuration.type)
            preview = .object(previewClaims)
            previewFragment = JSONFragment(preview)
        case .mdoc:
            sdJWTPayload = nil
            mdocElements = set.mdocNameSpaces(main: configuration.type, domestic: domesticNameSpace)
                .mapValues { $0.map { IssuerSignedElement(identifier: $0.identifier, value: $0.value) } }
            preview = .object(set.mdocPreview(main: configuration.type, domestic: domesticNameSpace))
            previewFragment = JSONFragment(preview)
        }
    }
}

/// The `PreparedClaims` of the current days, shared by the worker threads. A persona file
/// edit makes a new `PIDProvider`, and so a new cache; a new day makes new keys, and the
/// cache empties itself once it holds `capacity` entries, so yesterday's go.
final class PreparedClaimsCache: Sendable {
    struct Key: Hashable, Sendable {
        let persona: String
        let configuration: String
        /// UTC days since 1970 of the issuance and of the expiry: what the dates and ages in
        /// the claims depend on.
        let issuedDay: Int64
        let expiresDay: Int64

        init(persona: String, configuration: String, issuedAt: Int64, expiresAt: Int64) {
            self.persona = persona
            self.configuration = configuration
            issuedDay = Self.day(issuedAt)
            expiresDay = Self.day(expiresAt)
        }

        /// Floor division, so an instant before 1970 falls on its own day.
        static func day(_ unixSeconds: Int64) -> Int64 {
            unixSeconds >= 0 ? unixSeconds / 86_400 : -((-unixSeconds + 86_399) / 86_400)
        }
    }

    static let capacity = 1_024
    private let entries = Locked<[Key: PreparedClaims]>([:])

    /// The entry for `key`, made by `make` (outside the lock) when missing. Two threads may
    /// both make a missing entry; they make the same value.
    func claims(for key: Key, make: () -> PreparedClaims) -> PreparedClaims {
        if let found = entries.read({ $0[key] }) { return found }
        let made = make()
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = made
        }
        return made
    }
}
