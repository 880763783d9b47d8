import JOSE
import JSON
import OAuth
import Store
import Support

/// The states of a wallet instance (IT-Wallet, Wallet Solution: Mobile Application Instance).
public enum WalletInstanceState: String, Sendable, CaseIterable {
    /// Registered; no wallet attestation yet, or revoked back to here.
    case installed
    /// Holds a wallet attestation.
    case operational
    /// Holds a PID.
    case valid
    /// Final.
    case uninstalled
}

extension WalletProvider {
    /// `GET <wp>/nonce` (item 3): a fresh stateless nonce, good for `nonce_lifetime` and for the
    /// one request that uses it successfully.
    public func issueNonce() -> String { nonces.issue() }

    /// `POST <wp>/wallet-instance` (items 4, 5): registers the instance a key attestation
    /// vouches for, or throws the first failed check in the IT-Wallet order:
    /// 1. shape (`RegistrationRequest.parse`, by the caller): 400 `bad_request`;
    /// 2. nonce unknown, expired or already used: 403 `invalid_request`;
    /// 3. key attestation unreadable, badly signed, off its roots, not bound to this nonce,
    ///    tag and key, or of a format not accepted here: 403 `invalid_request`;
    /// 4. device failing integrity: 403 `integrity_check_error`;
    /// 5. tag already registered: 403 `invalid_request`.
    /// The nonce is spent and the instance and its account stored in one transaction, so a
    /// refused request burns nothing, and of 50 concurrent uses of one nonce exactly one wins.
    @discardableResult
    public func register(_ request: RegistrationRequest) throws(WalletProviderError) -> WalletInstanceRecord {
        let now = clock.now()
        guard nonces.issueTime(of: request.nonce, now: now) != nil else {
            throw .refused("the nonce is unknown or expired; get one from \(urls.nonce)")
        }
        // Issue 21: a PIN key makes an NL account, which only a provider holding keys has.
        if request.pinPublicKey != nil, !configuration.remoteKeys {
            throw .badRequest("pin_public_key: this wallet provider holds no keys for wallets (remote_keys is off)")
        }
        let instances = WalletInstanceRepository(database: database)
        if try storing({ () throws(StoreError) in
            try instances.replayRecorded(issuer: entityID, purpose: Self.noncePurpose, jti: request.nonce)
        }) {
            throw .refused("the nonce was already used")
        }
        guard let verifier = verifiers[request.format] else {
            throw .refused("\(request.format.rawValue) key attestations are not accepted by this wallet provider")
        }
        let binding = KeyAttestationBinding(nonce: request.nonce, hardwareKeyTag: request.hardwareKeyTag)
        let attested = try verifier.verify(request.keyAttestation, binding: binding, now: now)
        // Android and Apple report a software-only key as such: it attests nothing about the
        // device's hardware, so the device fails integrity as IT-Wallet means it.
        if !attested.device.integrity || (attested.format != .dev && attested.device.securityLevel == .software) {
            throw WalletProviderError(.integrityCheckError, "the device failed its integrity check")
        }
        if try storing({ () throws(StoreError) in try instances.exists(provider: entityID, id: request.hardwareKeyTag) }) {
            throw .refused("hardware_key_tag is already registered")
        }
        let record = WalletInstanceRecord(
            provider: entityID, id: request.hardwareKeyTag, account: OAuthIdentifiers.random(bytes: 16),
            hardwareJWK: attested.hardwareKey.jsonValue.serialized(), hardwareJWKThumbprint: attested.hardwareKey.thumbprint(),
            format: attested.format.rawValue, deviceFacts: Self.deviceFactsJSON(attested.device).serialized(),
            state: WalletInstanceState.installed.rawValue, createdAt: now, updatedAt: now)
        enum Outcome { case stored, nonceUsed, tagTaken }
        let outcome: Outcome
        do {
            outcome = try database.transaction { database throws -> Outcome in
                guard try nonces.consume(request.nonce, in: NonceRepository(database: database)) else { return .nonceUsed }
                guard try WalletInstanceRepository(database: database).insertWithNewAccount(
                    record, pinPublicKey: request.pinPublicKey?.jsonValue.serialized()) else {
                    // Roll the nonce back: a refused request burns nothing.
                    throw RegistrationConflict()
                }
                return .stored
            }
        } catch is RegistrationConflict {
            outcome = .tagTaken
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw WalletProviderError(.serverError, "the registration could not be stored", cause: "\(error)")
        }
        switch outcome {
        case .stored:
            logger.info("wallet instance \(record.id) registered (\(record.format)\(request.pinPublicKey != nil ? ", NL account" : "")) on \(entityID)")
            return record
        case .nonceUsed: throw .refused("the nonce was already used")
        case .tagTaken: throw .refused("hardware_key_tag is already registered")
        }
    }

    /// `POST <wp>/dev/key-attestation` (item 5a): a development key attestation for the
    /// emulator or CLI wallet that holds `request.jwk`, computing the client data hash itself.
    /// Off when `dev_attestations` is false.
    public func makeDevelopmentKeyAttestation(_ request: DevKeyAttestationRequest) throws(WalletProviderError) -> String {
        guard configuration.devAttestations else {
            throw WalletProviderError(.notFound, "development key attestations are off on this wallet provider")
        }
        let jwk: JWK
        do throws(JOSEError) {
            jwk = try JWK(json: request.jwk)
            guard jwk.kty == "EC", jwk.json["crv"]?.stringValue == "P-256" else { throw .invalidKey("the hardware key must be EC P-256") }
            _ = try jwk.publicKey()
        } catch {
            throw .badRequest("jwk: \(error)")
        }
        return try DevelopmentKeyAttestation.make(
            hardwareKey: jwk, binding: KeyAttestationBinding(nonce: request.nonce, hardwareKeyTag: request.hardwareKeyTag),
            integrity: request.integrity, signer: keys.deviceMakerKey, root: keys.deviceMakerRoot, now: clock.now())
    }

    /// The provider's instances, oldest first; one account's with `account`. PIDs that expired
    /// since the last look take their instances back to `operational` first (item 8).
    public func instances(account: String? = nil) throws(WalletProviderError) -> [WalletInstanceRecord] {
        let repository = WalletInstanceRepository(database: database)
        let validity = WalletInstanceValidity(database: database)
        let now = clock.now()
        return try storing { () throws(StoreError) in
            try validity.settle(provider: entityID, now: now)
            return try repository.list(provider: entityID, account: account)
        }
    }

    /// The device facts as stored: `{model, os, security_level, integrity}`.
    static func deviceFactsJSON(_ facts: DeviceFacts) -> JSONValue {
        ["model": facts.model.map(JSONValue.string) ?? .null, "os": facts.os.map(JSONValue.string) ?? .null,
         "security_level": .string(facts.securityLevel.rawValue), "integrity": .bool(facts.integrity)]
    }

    /// A store call with its failure as the provider's error (500, or 503 when busy).
    func storing<T>(_ body: () throws(StoreError) -> T) throws(WalletProviderError) -> T {
        do throws(StoreError) { return try body() } catch { throw .store(error) }
    }
}

/// Thrown inside the registration transaction to roll the spent nonce back.
private struct RegistrationConflict: Error {}
