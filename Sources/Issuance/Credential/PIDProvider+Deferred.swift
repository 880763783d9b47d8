import JOSE
import JSON
import OAuth
import Store

extension PIDProvider {
    /// Stores a deferred request (§9): what to issue and to which keys, never claim values. It
    /// is ready `deferredInterval` seconds later and lives as long as an access token. `claim`
    /// runs first in the same database transaction (the credential endpoint consumes the
    /// request's c_nonce there); whatever it throws leaves nothing stored.
    func openTransaction(grant: AccessGrant, configuration credentialConfiguration: CredentialConfiguration,
                         keys holderKeys: [JWK], attesters: [Attester?] = [],
                         claim: ((Database) throws -> Void)? = nil) throws(IssuanceError) -> String {
        let id = Self.orderedToken()
        let now = clock.now()
        let request: JSONValue = [
            "credential_configuration_id": .string(credentialConfiguration.id),
            "persona": .string(grant.personaID),
            "keys": .array(holderKeys.map(\.jsonValue)),
            // Per key, who attested it (null for none): the delivery records it (issue 18).
            "attesters": .array(attesters.map { $0?.json ?? .null }),
        ]
        let record = TransactionRecord(
            id: id, issuer: issuer, tokenHash: grant.tokenHash, request: request.serialized(), createdAt: now,
            readyAt: now + configuration.deferredInterval,
            expiresAt: now + max(configuration.tokenLifetime, configuration.deferredInterval + 60))
        try inCredentialTransaction { db in
            try claim?(db)
            try TransactionRepository(database: db).insert(record)
        }
        return id
    }

    /// The Deferred Credential Endpoint (§9) for a request whose access token passed
    /// `accessGrant(for:)`: the transaction must have been opened with this same token. Not
    /// ready yet: 202 with the same `transaction_id` and the seconds left as `interval`
    /// (§9.2). Ready: the credentials, once; the transaction is marked delivered in the same
    /// database transaction that records them, so of concurrent collectors exactly one wins and
    /// the others get `invalid_transaction_id` (§9.3).
    public func deferredCredentialResponse(grant: AccessGrant, mediaType: String?, body: [UInt8]) throws(IssuanceError)
        -> CredentialEndpointResponse {
        let decoded = try decodeCredentialRequestBody(mediaType: mediaType, body: body)
        let request = try DeferredCredentialRequest.parse(decoded.json)
        try checkEncryption(request.responseEncryption, requestEncrypted: decoded.encrypted)
        let now = clock.now()
        let found = try withCredentialStore { () throws(StoreError) in
            try TransactionRepository(database: database).findOpen(issuer: issuer, id: request.transactionID,
                                                                   tokenHash: grant.tokenHash, now: now)
        }
        guard let transaction = found else {
            throw IssuanceError(.invalidTransactionID, "unknown, expired or already collected transaction_id")
        }
        if now < transaction.readyAt {
            return try credentialEndpointResponse(
                JSONValue.object(["transaction_id": .string(transaction.id), "interval": .int(max(1, transaction.readyAt - now))]).bytes,
                status: 202,
                encryption: request.responseEncryption)
        }
        let (persona, credentialConfiguration, holderKeys, attesters) = try deferredRequest(transaction)
        let repository = TransactionRepository(database: database)
        let issued = try issueCredentials(
            persona: persona, configuration: credentialConfiguration, keys: holderKeys, attesters: attesters,
            claim: { db in
                guard try TransactionRepository(database: db).markDelivered(issuer: self.issuer, id: transaction.id, now: now) else {
                    throw IssuanceError(.invalidTransactionID, "this transaction_id was already collected")
                }
            },
            undo: { try? repository.reopen(issuer: self.issuer, id: transaction.id) })
        return try credentialEndpointResponse(issued.bytes, status: 200, encryption: request.responseEncryption)
    }

    /// What the stored request names, checked again: the configuration or persona may have
    /// left the configuration since (then the request is denied for good, §9.3).
    private func deferredRequest(_ transaction: TransactionRecord) throws(IssuanceError)
        -> (Persona, CredentialConfiguration, [JWK], [Attester?]) {
        let json = (try? JSONValue.parse(transaction.request)) ?? [:]
        guard let persona = json["persona"]?.stringValue.flatMap(configuration.persona(id:)),
              let credentialConfiguration = json["credential_configuration_id"]?.stringValue.flatMap(configuration.configuration(id:))
        else {
            throw IssuanceError(.credentialRequestDenied, "the credential can no longer be issued")
        }
        var holderKeys: [JWK] = []
        for value in json["keys"]?.arrayValue ?? [] {
            guard let object = value.objectValue, let key = try? JWK(json: object) else {
                throw .serverError("a stored deferred request is damaged")
            }
            holderKeys.append(key)
        }
        guard !holderKeys.isEmpty else { throw .serverError("a stored deferred request is damaged") }
        // Requests stored before attesters were kept have none: their keys were not attested.
        let stored = json["attesters"]?.arrayValue ?? []
        let attesters = holderKeys.indices.map { i in i < stored.count ? Attester(json: stored[i]) : nil }
        return (persona, credentialConfiguration, holderKeys, attesters)
    }
}
