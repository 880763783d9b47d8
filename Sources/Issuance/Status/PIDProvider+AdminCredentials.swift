import JSON
import Store

/// The admin view of issued credentials (issue 7 item 10): list them by persona and change a
/// credential's status, which the status list at its `uri` shows at once.
extension PIDProvider {
    /// Records of this issuer, oldest first; `persona` nil lists every persona's.
    public func issuedCredentials(persona: String?) throws(IssuanceError) -> [IssuedCredentialRecord] {
        try withCredentialStore { () throws(StoreError) in
            try IssuedCredentialRepository(database: database).list(issuer: issuer, persona: persona)
        }
    }

    /// Sets one credential's status and returns the updated record; `not_found` (404) for an
    /// id this issuer never issued.
    public func setCredentialStatus(id: String, to status: CredentialStatus) throws(IssuanceError) -> IssuedCredentialRecord {
        let record = try withCredentialStore { () throws(StoreError) -> IssuedCredentialRecord? in
            let repository = IssuedCredentialRepository(database: database)
            guard try repository.setStatus(id: id, issuer: issuer, status: status.value) else { return nil }
            return try repository.find(id: id, issuer: issuer)
        }
        guard let record else { throw IssuanceError(.notFound, "no issued credential with this id") }
        logger.info("credential \(id) is now \(status.rawValue)")
        // Any change: `invalid` or `suspended` withdraws it, `valid` reinstates it.
        reportWithdrawn([record])
        return record
    }

    /// `{"status": "valid" | "invalid" | "suspended"}`: anything else is `invalid_request`.
    public static func parseStatusChange(_ body: JSONValue) throws(IssuanceError) -> CredentialStatus {
        guard let name = body["status"]?.stringValue, let status = CredentialStatus(rawValue: name) else {
            throw .invalidRequest("status must be \"valid\", \"invalid\" or \"suspended\"")
        }
        return status
    }

    /// `{"credentials": [...]}` for `GET /admin/credentials`.
    public static func credentialListJSON(_ records: [IssuedCredentialRecord]) -> JSONValue {
        ["credentials": .array(records.map(credentialJSON))]
    }

    /// One record as the admin API and the CLI show it: `id`, `persona`,
    /// `credential_configuration_id`, `status_list {uri, idx}`, `status`, `issued_at`, `expires_at`,
    /// and for a key attested by a wallet provider `key_attestation {issuer, key_storage}`.
    public static func credentialJSON(_ record: IssuedCredentialRecord) -> JSONValue {
        var json: [String: JSONValue] = [
            "id": .string(record.id),
            "persona": .string(record.persona),
            "credential_configuration_id": .string(record.configurationID),
            "status_list": ["uri": .string(record.statusURI), "idx": .int(Int64(record.statusIndex))],
            "status": .string(CredentialStatus(value: record.status)?.rawValue ?? "0x\(String(record.status, radix: 16))"),
            "issued_at": .int(record.issuedAt),
            "expires_at": .int(record.expiresAt),
        ]
        if let attester = record.keyAttestationIssuer {
            var attestation: [String: JSONValue] = ["issuer": .string(attester)]
            if let text = record.keyStorage, let storage = try? JSONValue.parse(Array(text.utf8)) { attestation["key_storage"] = storage }
            json["key_attestation"] = .object(attestation)
        }
        return .object(json)
    }

    /// Runs a store call of the credential side; a storage failure is ours (500), logged
    /// without the SQL detail reaching the client.
    func withCredentialStore<T>(_ body: () throws(StoreError) -> T) throws(IssuanceError) -> T {
        do throws(StoreError) {
            return try body()
        } catch {
            logger.error("credential store failure: \(error)")
            throw .serverError("the credential store failed")
        }
    }

    /// Runs `body` in one transaction of the credential side: an `IssuanceError` it throws (a
    /// refused request, after which nothing is written) passes through; any other failure is a
    /// storage failure, handled as in `withCredentialStore`.
    func inCredentialTransaction<T>(_ body: (Database) throws -> T) throws(IssuanceError) -> T {
        do {
            return try database.transaction(body)
        } catch let error as IssuanceError {
            throw error
        } catch {
            logger.error("credential store failure: \(error)")
            throw .serverError("the credential store failed")
        }
    }
}
