import Cryptography
import JOSE
import JSON
import OAuth
import StatusList
import Store

extension PIDProvider {
    /// The Credential Endpoint (OpenID4VCI 1.0 §8) for a request whose access token already
    /// passed `accessGrant(for:)`. In order: body (JSON or JWE), request shape, encryption
    /// rules, what is asked for against what the token grants, the key proofs, then issuance
    /// (consuming the `c_nonce` in the transaction that records it): 200 with one credential per proof key, or, for a deferred
    /// persona, 202 with a `transaction_id` (§8.3). Every refusal happens before anything is
    /// issued or recorded.
    public func credentialResponse(grant: AccessGrant, mediaType: String?, body: [UInt8]) throws(IssuanceError)
        -> CredentialEndpointResponse {
        let decoded = try decodeCredentialRequestBody(mediaType: mediaType, body: body)
        let request = try CredentialRequest.parse(
            decoded.json, injiConfigurations: configuration.injiCompat ? configuration.credentialConfigurations : nil)
        try checkEncryption(request.responseEncryption, requestEncrypted: decoded.encrypted)
        let credentialConfiguration = try requestedConfiguration(request.target, grant: grant)
        guard let persona = configuration.persona(id: grant.personaID) else {
            throw IssuanceError(.credentialRequestDenied, "the persona of this grant is no longer configured")
        }
        let proofs = try checkProofs(request.proofs, grant: grant, requirement: credentialConfiguration.keyAttestationsRequired)
        // The c_nonce is consumed in the transaction that records the issuance (or opens the
        // deferred transaction): one commit instead of two per request, and a request that
        // cannot be recorded leaves its nonce usable.
        let consumeNonces = { (db: Database) throws in try self.consumeCNonces(of: proofs, in: db) }
        if persona.deferred {
            let id = try openTransaction(grant: grant, configuration: credentialConfiguration, keys: proofs.map(\.key),
                                         attesters: proofs.map(\.attester), claim: consumeNonces)
            return try credentialEndpointResponse(
                JSONValue.object(["transaction_id": .string(id), "interval": .int(configuration.deferredInterval)]).bytes, status: 202,
                encryption: request.responseEncryption)
        }
        let issued = try issueCredentials(persona: persona, configuration: credentialConfiguration, keys: proofs.map(\.key),
                                          thumbprints: proofs.map(\.thumbprint), publicKeys: proofs.map(\.publicKey),
                                          attesters: proofs.map(\.attester), claim: consumeNonces)
        return try credentialEndpointResponse(issued.bytes, status: 200, encryption: request.responseEncryption)
    }

    /// §8.2: `credential_identifier` exactly when the token response carried
    /// `credential_identifiers`, `credential_configuration_id` otherwise; the configuration
    /// must be one the token grants.
    func requestedConfiguration(_ target: CredentialRequest.Target, grant: AccessGrant) throws(IssuanceError)
        -> CredentialConfiguration {
        let configurationID: String
        switch target {
        case .identifier(let identifier):
            guard !grant.credentialIdentifiers.isEmpty else {
                throw .invalidCredentialRequest("this access token has no credential_identifiers; use credential_configuration_id")
            }
            guard let id = grant.credentialIdentifiers[identifier] else {
                throw IssuanceError(.unknownCredentialIdentifier, "unknown credential_identifier")
            }
            configurationID = id
        case .configuration(let id):
            guard grant.credentialIdentifiers.isEmpty else {
                throw .invalidCredentialRequest("the token response named credential_identifiers; use credential_identifier")
            }
            guard configuration.configuration(id: id) != nil else {
                throw IssuanceError(.unknownCredentialConfiguration, "unknown credential_configuration_id")
            }
            guard grant.credentialConfigurationIDs.contains(id) else {
                // OpenID4VCI §8.3.1.1 defers to RFC 6750 §3.1: a valid token that does not
                // cover the request is 403 `insufficient_scope`.
                throw IssuanceError(.insufficientScope, "the access token does not grant \(id)",
                                    authenticationScheme: grant.dpopThumbprint == nil ? "Bearer" : "DPoP")
            }
            configurationID = id
        }
        guard let found = configuration.configuration(id: configurationID) else {
            throw IssuanceError(.unknownCredentialConfiguration, "the credential configuration is no longer offered")
        }
        return found
    }

    /// Issues one credential per key and answers `{"credentials": [...], "notification_id"}`.
    /// The status list entries and the records are written in one transaction, committed
    /// before the credentials are signed (signing outside the database lock keeps issuance
    /// parallel) and so before the answer: a `kill -9` after the answer loses nothing. If
    /// signing fails the records are removed and `undo` runs. `claim` runs first inside the
    /// transaction (a deferred delivery marks its transaction there). `thumbprints` are the
    /// keys' RFC 7638 thumbprints when the caller has them already (the checked proofs), and
    /// `publicKeys` the keys as the proofs' verification imported them (nil where it did not).
    func issueCredentials(persona: Persona, configuration credentialConfiguration: CredentialConfiguration, keys holderKeys: [JWK],
                          thumbprints: [String]? = nil, publicKeys: [PublicKey?]? = nil, attesters: [Attester?]? = nil, claim: ((Database) throws -> Void)? = nil,
                          undo: (() -> Void)? = nil) throws(IssuanceError) -> CredentialResponseBody {
        let now = clock.now()
        let expiresAt = now + configuration.credentialLifetime
        let notificationID = Self.orderedToken(bytes: 16)
        // Made before the database lock is taken, so the lock is held for SQL only.
        let thumbprints = thumbprints ?? holderKeys.map { $0.thumbprint() }
        let ids = holderKeys.map { _ in Self.orderedToken(bytes: 16) }
        let records: [IssuedCredentialRecord]
        do {
            records = try database.transaction { db in
                try claim?(db)
                let entries = try allocateStatusEntries(holderKeys.count, in: db, now: now)
                let repository = IssuedCredentialRepository(database: db)
                var written: [IssuedCredentialRecord] = []
                for (i, entry) in entries.enumerated() {
                    let record = IssuedCredentialRecord(
                        id: ids[i], issuer: issuer, persona: persona.id,
                        configurationID: credentialConfiguration.id, statusURI: entry.uri, statusIndex: entry.index,
                        keyThumbprint: thumbprints[i], notificationID: notificationID, issuedAt: now, expiresAt: expiresAt,
                        keyAttestationIssuer: attesters?[i]?.issuer,
                        keyStorage: attesters?[i]?.keyStorage.map { JSONValue.array($0.map(JSONValue.string)).serialized() })
                    try repository.insert(record)
                    written.append(record)
                }
                return written
            }
        } catch let error as IssuanceError {
            throw error
        } catch {
            logger.error("cannot record issued credentials: \(error)")
            throw .serverError("the credential store failed")
        }
        var credentials: [String] = []
        credentials.reserveCapacity(records.count)
        do throws(IssuanceError) {
            for (i, (key, record)) in zip(holderKeys, records).enumerated() {
                let credential = try issueCredential(
                    persona: persona, configuration: credentialConfiguration, holderKey: key, holderPublicKey: publicKeys?[i] ?? nil,
                    status: StatusReference(index: record.statusIndex, uri: record.statusURI), issuedAt: now, expiresAt: expiresAt)
                credentials.append(credential)
            }
        } catch {
            try? IssuedCredentialRepository(database: database).delete(ids: records.map(\.id))
            undo?()
            throw error
        }
        reportIssued(records)
        return CredentialResponseBody(credentials: credentials, notificationID: notificationID)
    }
}

/// The Credential Response (OpenID4VCI 1.0 §8.3): `{"credentials":[{"credential":…},…],
/// "notification_id":…}`, written once through the JSON writer (members sorted, as a `JSONValue`
/// would give them). Sent on every issuance, and each credential (a compact SD-JWT or a base64url
/// mdoc) is kilobytes long: the writer checks it for escapes a word at a time and copies it
/// whole, with no dictionaries built around it.
struct CredentialResponseBody {
    let credentials: [String]
    let notificationID: String

    var bytes: [UInt8] {
        var out = JSONWriter(capacity: credentials.reduce(64 + notificationID.utf8.count) { $0 + $1.utf8.count + 20 })
        out.openObject()
        out.name("credentials")
        out.openArray()
        for credential in credentials {
            out.openObject()
            out.member("credential", credential)
            out.closeObject()
        }
        out.closeArray()
        out.member("notification_id", notificationID)
        out.closeObject()
        return out.bytes
    }
}
