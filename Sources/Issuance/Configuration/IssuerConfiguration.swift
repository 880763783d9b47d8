import JSON
import OAuth

/// `services.pid_provider` of an entity file: what the PID Provider issues, to whom, and under
/// which rules. Everything but `credential_configurations` has a default, so a two-line file
/// runs a working issuer.
public struct IssuerConfiguration: Sendable {
    public var credentialConfigurations: [CredentialConfiguration]
    public var personas: [Persona]
    /// Every token request, and every credential request, must carry a DPoP proof (RFC 9449).
    public var requireDPoP = false
    /// PAR and the token endpoint require `OAuth-Client-Attestation` + PoP, even for
    /// pre-authorized codes.
    public var requireClientAttestation = false
    /// Most proofs (hence credentials) one credential request may carry.
    public var batchSize = 10
    /// Seconds: issued credentials, credential offers (and their pre-authorized codes),
    /// authorization codes, access tokens, `c_nonce`s and DPoP nonces, PAR request URIs.
    public var credentialLifetime: Int64 = 90 * 86_400
    public var offerLifetime: Int64 = 86_400
    public var codeLifetime: Int64 = 300
    public var tokenLifetime: Int64 = 3_600
    public var nonceLifetime: Int64 = 300
    public var requestURILifetime: Int64 = 90
    /// How far a proof's or a DPoP proof's `iat` may lie from now, in seconds.
    public var proofWindow: Int64 = 300
    /// A deferred persona's credential is ready this many seconds after the request; it is
    /// also the `interval` the wallet is told.
    public var deferredInterval: Int64 = 5
    /// Credential requests and responses must be encrypted (`encryption_required` in both
    /// `credential_request_encryption` and `credential_response_encryption`).
    public var encryptionRequired = false
    /// The token response carries `credential_previews` (docs/pid-provider.md): the claims the
    /// credentials will hold, so a wallet can compare recovery codes before it asks for them;
    /// `true` in Trustbed's own form, `"nl"` in the NL wallet's (`TokenClaimsPreview`).
    public var tokenClaimsPreview: TokenClaimsPreview = .off
    /// `inji_compat`: also read MOSIP Inji's draft-13 credential request shape (`format` + `vct` /
    /// `doctype` / `credential_definition`, singular `proof`); see `CredentialRequest+Inji.swift`.
    public var injiCompat = false
    /// Trust Anchors (entity names or IDs) a wallet provider's chain must reach for its client
    /// attestations to count; names are turned into IDs by the composition root.
    public var trustAnchors: [String] = []
    /// PEM files (relative to the entity file's folder) with roots an attestation's `x5c` may
    /// chain to instead.
    public var attestationRootFiles: [String] = []
    /// Issuer `display` (OpenID4VCI §12.2.4).
    public var display: JSONValue = [["name": "Trustbed PID Provider", "locale": "en"]]
    /// Country of the IACA and the PID's `issuing_country`; authority of `issuing_authority`.
    public var issuingCountry = "NL"
    public var issuingAuthority = "Trustbed Test PID Provider"
    /// Public clients by `client_id` with the redirect URIs they may use without a client
    /// attestation (RFC 9700 §4.11: no open redirector; see `RedirectURIRule`).
    public var clients: [String: RegisteredClient] = [:]
    /// `key_attestations_required` under `services.pid_provider`: the default of every
    /// credential configuration that does not name its own (issue 18; see
    /// `CredentialConfiguration.keyAttestationsRequired`). nil: key attestations are optional.
    public var keyAttestationsRequired: KeyAttestationRequirement?

    public init(credentialConfigurations: [CredentialConfiguration], personas: [Persona]) {
        self.credentialConfigurations = credentialConfigurations
        self.personas = personas
    }

    public func configuration(id: String) -> CredentialConfiguration? { credentialConfigurations.first { $0.id == id } }
    public func persona(id: String) -> Persona? { personas.first { $0.id == id } }

    /// The mdoc nameSpace of what a provider adds to the PID (the recovery code): ARF Annex 2
    /// PID_06 keeps `eu.europa.ec.eudi.pid.1` for the Rulebook's attributes and puts national
    /// ones in a domestic nameSpace, by default `eu.europa.ec.eudi.pid.<issuing country>.1`.
    public func domesticNameSpace(for c: CredentialConfiguration) -> String {
        c.domesticNameSpace ?? "eu.europa.ec.eudi.pid.\(issuingCountry.lowercased()).1"
    }

    static let knownFields: Set<String> = [
        "credential_configurations", "personas", "require_dpop", "require_client_attestation", "batch_size",
        "credential_lifetime", "offer_lifetime", "code_lifetime", "token_lifetime", "nonce_lifetime",
        "request_uri_lifetime", "proof_window", "deferred_interval", "encryption_required", "token_claims_preview",
        "trust_anchors", "attestation_roots", "display", "issuing_country", "issuing_authority",
        "clients",
        "key_attestations_required", "inji_compat",
    ]

    /// Reads `services.pid_provider`. `loadPersonas` reads a persona file named by a relative
    /// path (the composition root resolves it against the entity file's folder).
    public static func parse(_ reader: JSONReader, loadPersonas: (String) throws -> JSONValue) throws -> IssuerConfiguration {
        try reader.rejectUnknown(allowed: knownFields)
        let keyAttestationDefault = try reader.optionalField("key_attestations_required").map {
            try KeyAttestationRequirement.parse($0.object())
        }
        let configs = try reader.object("credential_configurations")
        var credentialConfigurations: [CredentialConfiguration] = []
        for (id, field) in configs.members.sorted(by: { $0.name < $1.name }) {
            credentialConfigurations.append(try CredentialConfiguration.parse(id: id, try field.object(),
                                                                              keyAttestationDefault: keyAttestationDefault))
        }
        guard !credentialConfigurations.isEmpty else {
            throw JSONReadError(path: configs.path, problem: .invalid("must name at least one credential configuration"))
        }
        let personaField = try reader.field("personas")
        let personaList: JSONField
        if let file = personaField.value.stringValue {
            personaList = JSONField(try loadPersonas(file), path: personaField.path)
        } else {
            personaList = personaField
        }
        let personas = try Persona.parseList(personaList)
        var c = IssuerConfiguration(credentialConfigurations: credentialConfigurations, personas: personas)
        c.keyAttestationsRequired = keyAttestationDefault
        if let v = try reader.optionalBool("require_dpop") { c.requireDPoP = v }
        if let v = try reader.optionalBool("require_client_attestation") { c.requireClientAttestation = v }
        if let v = try reader.optionalBool("encryption_required") { c.encryptionRequired = v }
        if let v = reader.optionalField("token_claims_preview") { c.tokenClaimsPreview = try TokenClaimsPreview.parse(v) }
        if let v = try reader.optionalBool("inji_compat") { c.injiCompat = v }
        c.batchSize = Int(try positive(reader, "batch_size", default: Int64(c.batchSize), max: 100))
        c.credentialLifetime = try positive(reader, "credential_lifetime", default: c.credentialLifetime, max: 10 * 365 * 86_400)
        c.offerLifetime = try positive(reader, "offer_lifetime", default: c.offerLifetime, max: 365 * 86_400)
        c.codeLifetime = try positive(reader, "code_lifetime", default: c.codeLifetime, max: 86_400)
        c.tokenLifetime = try positive(reader, "token_lifetime", default: c.tokenLifetime, max: 86_400)
        c.nonceLifetime = try positive(reader, "nonce_lifetime", default: c.nonceLifetime, max: 86_400)
        c.requestURILifetime = try positive(reader, "request_uri_lifetime", default: c.requestURILifetime, max: 3_600)
        c.proofWindow = try positive(reader, "proof_window", default: c.proofWindow, max: 86_400)
        c.deferredInterval = try positive(reader, "deferred_interval", default: c.deferredInterval, max: 3_600)
        if let v = try reader.optionalStringArray("trust_anchors") { c.trustAnchors = v }
        if let v = try reader.optionalStringArray("attestation_roots") { c.attestationRootFiles = v }
        if let v = reader.optionalField("display") {
            guard v.value.arrayValue != nil else { throw v.invalid("expected an array of display objects") }
            c.display = v.value
        }
        if let v = try reader.optionalString("issuing_country") {
            guard v.count == 2, v.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
                throw reader.invalid("issuing_country", "expected an ISO 3166-1 alpha-2 code")
            }
            c.issuingCountry = v
        }
        if let v = try reader.optionalString("issuing_authority") { c.issuingAuthority = v }
        if let clients = try reader.optionalObject("clients") {
            for (id, field) in clients.members { c.clients[id] = try RegisteredClient.parse(try field.object()) }
        }
        return c
    }

    private static func positive(_ reader: JSONReader, _ name: String, default value: Int64, max: Int64) throws(JSONReadError) -> Int64 {
        guard let v = try reader.optionalInt(name) else { return value }
        guard v > 0, v <= max else { throw reader.invalid(name, "expected a number between 1 and \(max)") }
        return v
    }
}

/// One entry of `credential_configurations_supported` (OpenID4VCI 1.0 Appendix A).
public struct CredentialConfiguration: Sendable, Equatable {
    public enum Format: String, Sendable {
        case sdJWT = "dc+sd-jwt"
        case mdoc = "mso_mdoc"
    }

    /// Which claim set the credential carries: the EUDI PID Rulebook's, or the NL profile's
    /// (the Rulebook's plus `bsn`).
    public enum Profile: String, Sendable {
        case eudi, nl
    }

    public let id: String
    public let format: Format
    /// `vct` for SD-JWT VC, `doctype` for mdoc.
    public let type: String
    public let scope: String
    public let profile: Profile
    /// The configuration's `credential_metadata.display`, when the file gives one.
    public let display: JSONValue?
    /// mso_mdoc: `domestic_namespace`, the nameSpace of the provider's additions (see
    /// `IssuerConfiguration.domesticNameSpace`); nil for the default.
    public let domesticNameSpace: String?
    /// `key_attestations_required` (OpenID4VCI 1.0 Appendix D.2, §12.2.4): every proof key of
    /// a request for this configuration must be attested (and meet the listed levels). From
    /// the configuration's own member, else the service-wide default; `false` there opts out.
    public var keyAttestationsRequired: KeyAttestationRequirement?

    public init(id: String, format: Format, type: String, scope: String, profile: Profile = .eudi, display: JSONValue? = nil,
                domesticNameSpace: String? = nil) {
        self.id = id
        self.format = format
        self.type = type
        self.scope = scope
        self.profile = profile
        self.display = display
        self.domesticNameSpace = domesticNameSpace
    }

    static func parse(id: String, _ reader: JSONReader,
                      keyAttestationDefault: KeyAttestationRequirement? = nil) throws(JSONReadError) -> CredentialConfiguration {
        try reader.rejectUnknown(allowed: ["format", "vct", "doctype", "scope", "profile", "display", "domestic_namespace",
                                           "key_attestations_required"])
        let formatName = try reader.string("format")
        guard let format = Format(rawValue: formatName) else {
            throw reader.invalid("format", "expected \"dc+sd-jwt\" or \"mso_mdoc\"")
        }
        let type = try format == .sdJWT ? reader.nonEmptyString("vct") : reader.nonEmptyString("doctype")
        let profileName = try reader.optionalString("profile") ?? "eudi"
        guard let profile = Profile(rawValue: profileName) else { throw reader.invalid("profile", "expected \"eudi\" or \"nl\"") }
        if profile == .nl, format != .sdJWT { throw reader.invalid("profile", "the NL profile is an SD-JWT VC") }
        let display = reader.optionalField("display")
        if let display, display.value.arrayValue == nil { throw display.invalid("expected an array of display objects") }
        let domestic = try reader.optionalString("domestic_namespace")
        if let domestic {
            guard format == .mdoc else { throw reader.invalid("domestic_namespace", "only an mso_mdoc configuration has nameSpaces") }
            guard !domestic.isEmpty, domestic != type, domestic.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw reader.invalid("domestic_namespace", "expected a nameSpace other than the doctype, printable ASCII")
            }
        }
        var configuration = CredentialConfiguration(id: id, format: format, type: type, scope: try reader.optionalString("scope") ?? id,
                                                    profile: profile, display: display?.value,
                                                    domesticNameSpace: domestic)
        configuration.keyAttestationsRequired = keyAttestationDefault
        if let field = reader.optionalField("key_attestations_required") {
            if field.value == .bool(false) {
                configuration.keyAttestationsRequired = nil
            } else {
                configuration.keyAttestationsRequired = try KeyAttestationRequirement.parse(try field.object())
            }
        }
        return configuration
    }
}

/// `token_claims_preview`: which form of `credential_previews` the token response carries.
/// A boolean literal still reads as before (`true` is `.claims`), so `= true` in code and in
/// entity files keeps its meaning.
public enum TokenClaimsPreview: Sendable, Equatable, ExpressibleByBooleanLiteral {
    /// No previews (`false`, the default).
    case off
    /// `true`: `{"credential_configuration_id", "format", "claims"}` per configuration.
    case claims
    /// `"nl"`: the NL wallet's `CredentialPreview` (see `NLCredentialPreview`).
    case nl

    public init(booleanLiteral value: Bool) { self = value ? .claims : .off }

    static func parse(_ field: JSONField) throws(JSONReadError) -> TokenClaimsPreview {
        if let flag = field.value.boolValue { return flag ? .claims : .off }
        if field.value.stringValue == "nl" { return .nl }
        throw field.invalid("expected true, false or \"nl\"")
    }
}
