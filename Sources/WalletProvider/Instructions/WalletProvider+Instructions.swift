import JOSE
import JSON
import OAuth
import Store

extension WalletProvider {
    /// The `typ` of an instruction's answer.
    public static let instructionResultType = "wp-instruction-result+jwt"

    /// `POST <wp>/instructions/challenge` (issue 21): a fresh challenge for one instance, good
    /// once for `challenge_lifetime` seconds. 404 when `remote_keys` is off or the instance is
    /// unknown; 403 `invalid_request` for a revoked instance or an account without a PIN key.
    public func issueInstructionChallenge(_ request: InstructionChallengeRequest) throws(WalletProviderError) -> String {
        try requireRemoteKeys()
        let now = clock.now()
        let (instance, _) = try nlAccount(instance: request.instance)
        let challenge = OAuthIdentifiers.random(bytes: 32)
        try storing { () throws(StoreError) in
            try InstructionChallengeRepository(database: database).insert(provider: entityID, challenge: challenge, instance: instance.id,
                                                                          expiresAt: now + configuration.challengeLifetime)
        }
        return challenge
    }

    /// `POST <wp>/instructions/<name>`: checks the request in the order `Instruction`
    /// describes, performs it, and answers the result JWT (`typ` `wp-instruction-result+jwt`,
    /// ES256 by the provider's signing key, `x5c`; claims `iss` = the provider, `aud` = the
    /// instance, `iat`, `instruction` = the name, `result`).
    public func performInstruction(named name: String, _ request: InstructionRequest) throws(WalletProviderError) -> String {
        try requireRemoteKeys()
        guard let type = InstructionRegistry.named(name) else {
            throw .invalidInstruction("unknown instruction \(name)")
        }
        return try perform(type, request)
    }

    private func perform<I: Instruction>(_ type: I.Type, _ request: InstructionRequest) throws(WalletProviderError) -> String {
        let now = clock.now()
        let params: I.Params
        do throws(JSONReadError) {
            params = try I.parseParams(JSONReader(request.params, path: JSONPath("params")))
        } catch {
            throw .invalidInstruction("\(error)")
        }
        let (instance, account) = try nlAccount(instance: request.instance)
        let assertionCounter = try checkInstructionHardwareSignature(request, instance: instance)
        guard request.audience.contains(entityID) else { throw .refused("aud must be \(entityID)") }
        guard request.issuedAt <= now + Self.requestLeeway, now - request.issuedAt <= Self.maxRequestLifetime else {
            throw .refused("iat is out of range")
        }
        let challenges = InstructionChallengeRepository(database: database)
        guard try storing({ () throws(StoreError) in
            try challenges.isUsable(provider: entityID, challenge: request.challenge, instance: instance.id, now: now)
        }) else {
            throw .refused("the challenge is unknown, expired, used, or another instance's; get one from \(urls.instructionChallenge)")
        }
        try Self.checkState(account, accepts: I.self)
        let signer = try I.signer(for: params, account: account)
        switch signer {
        case .pinKey:
            guard let pinKey = Self.pinKey(of: account), Self.verifies(request.jws, key: pinKey) else {
                try recordWrongPIN(account: account, instance: instance, challenge: request.challenge, now: now)
            }
        case .key(let key):
            guard Self.verifies(request.jws, key: key) else {
                throw .refused("the instruction's signature does not verify with the key \(I.name) names")
            }
        }
        let prepared = try I.prepare(params, in: InstructionContext(provider: self, database: database, account: account, instance: instance,
                                                                    challenge: request.challenge, now: now))
        let outcome: InstructionOutcome
        do {
            outcome = try database.transaction { database throws -> InstructionOutcome in
                guard try InstructionChallengeRepository(database: database).consume(
                    provider: entityID, challenge: request.challenge, instance: instance.id, now: now) else {
                    throw WalletProviderError.refused("the challenge was already used")
                }
                if let assertionCounter,
                   try !WalletInstanceRepository(database: database).raiseAssertionCounter(provider: entityID, id: instance.id, to: assertionCounter) {
                    throw WalletProviderError.refused("hardware_signature: the App Attest assertion's counter was already used")
                }
                // Read again under the write lock: a concurrent instruction may have moved it.
                let accounts = WalletAccountRepository(database: database)
                guard let current = try accounts.find(provider: entityID, id: account.id) else {
                    throw WalletProviderError(.notFound, "the account was deleted")
                }
                try Self.checkState(current, accepts: I.self)
                if case .pinKey = signer, current.pinFailures != 0 { try accounts.resetPINFailures(provider: entityID, id: account.id) }
                let context = InstructionContext(provider: self, database: database, account: current, instance: instance,
                                                 challenge: request.challenge, now: now)
                let value = try I.perform(prepared, in: context)
                if let refusal = context.deferredRefusal.withLock({ $0 }) { return .refused(refusal) }
                return .result(value)
            }
        } catch let error as WalletProviderError {
            throw error
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw WalletProviderError(.serverError, "the instruction could not be performed", cause: "\(error)")
        }
        let result: JSONValue
        switch outcome {
        case .result(let value): result = value
        case .refused(let error): throw error
        }
        let claims: [String: JSONValue] = ["iss": .string(entityID), "aud": .string(instance.id), "iat": .int(now),
                                           "instruction": .string(I.name), "result": result]
        do {
            return try JWS.sign(payload: claims, key: keys.signingKey, algorithm: .ES256, keyID: keys.signingJWK.kid ?? "",
                                type: Self.instructionResultType, extraHeader: ["x5c": .array(keys.x5c.map(JSONValue.string))])
        } catch {
            throw WalletProviderError(.serverError, "the instruction's result could not be signed", cause: "\(error)")
        }
    }

    /// A wrong PIN: the challenge is spent and the count raised in one transaction (so one
    /// challenge buys one attempt however often it is sent), and at `pin_attempts` the account
    /// is `blocked`. One security-event log line, without any key material.
    private func recordWrongPIN(account: WalletAccountRecord, instance: WalletInstanceRecord, challenge: String,
                                now: Int64) throws(WalletProviderError) -> Never {
        let outcome: (failures: Int64, state: String)?
        do {
            outcome = try database.transaction { database throws -> (failures: Int64, state: String)? in
                guard try InstructionChallengeRepository(database: database).consume(provider: entityID, challenge: challenge,
                                                                                     instance: instance.id, now: now) else { return nil }
                return try WalletAccountRepository(database: database).recordPINFailure(
                    provider: entityID, id: account.id, maxAttempts: configuration.pinAttempts, now: now)
            }
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw WalletProviderError(.serverError, "the PIN failure could not be recorded", cause: "\(error)")
        }
        guard let outcome else { throw .refused("the challenge was already used") }
        logger.notice("security event: invalid_pin for account \(account.id) on \(entityID) (\(outcome.failures) of \(configuration.pinAttempts))")
        let left = max(0, configuration.pinAttempts - outcome.failures)
        var error: WalletProviderError
        if outcome.state == WalletAccountState.blocked.rawValue {
            error = WalletProviderError(.accountBlocked, "the account is blocked after \(outcome.failures) wrong PINs; only PIN recovery is accepted")
        } else {
            error = WalletProviderError(.invalidPIN, "the PIN signature is wrong; \(left) attempt(s) left")
        }
        error.extra = ["attempts_left": .int(left), "pin_failures": .int(outcome.failures)]
        throw error
    }

    /// The instance an instruction names and its NL account.
    func nlAccount(instance id: String) throws(WalletProviderError) -> (WalletInstanceRecord, WalletAccountRecord) {
        guard let instance = try storing({ () throws(StoreError) in try WalletInstanceRepository(database: database).find(provider: entityID, id: id) }) else {
            throw WalletProviderError(.notFound, "no wallet instance has this hardware_key_tag")
        }
        guard instance.revokedAt == nil, instance.state != WalletInstanceState.uninstalled.rawValue else {
            throw .refused("this wallet instance is \(instance.revokedAt != nil ? "revoked" : "uninstalled")")
        }
        guard let account = try storing({ () throws(StoreError) in
            try WalletAccountRepository(database: database).find(provider: entityID, id: instance.account)
        }), account.pinPublicKey != nil else {
            throw .refused("this instance's account has no PIN key: register the instance with pin_public_key")
        }
        return (instance, account)
    }

    /// The hardware signature over the instruction's bytes; returns the App Attest counter to
    /// raise in the instruction's transaction, if one was used.
    private func checkInstructionHardwareSignature(_ request: InstructionRequest,
                                                   instance: WalletInstanceRecord) throws(WalletProviderError) -> Int64? {
        guard let hardwareKey = Self.hardwareKey(of: instance) else {
            throw WalletProviderError(.serverError, "the instance's hardware key is unreadable", cause: instance.id)
        }
        let signed = Array(request.compact.utf8)
        if instance.format == DeviceKeyAttestationFormat.apple.rawValue, let assertion = AppAttestAssertion.decode(request.hardwareSignature) {
            try assertion.verify(clientData: signed, key: hardwareKey, appIDs: configuration.appleAppIDs)
            let stored = try storing { () throws(StoreError) in
                try WalletInstanceRepository(database: database).assertionCounter(provider: entityID, id: instance.id)
            } ?? 0
            guard Int64(assertion.counter) > stored else {
                throw .refused("hardware_signature: the App Attest assertion's counter \(assertion.counter) does not exceed \(stored)")
            }
            return Int64(assertion.counter)
        }
        guard HardwareSignature.verify(request.hardwareSignature, data: signed, key: hardwareKey) else {
            throw .refused("hardware_signature does not verify with the instance's hardware key")
        }
        return nil
    }

    /// `blocked` answers 403 `account_blocked`; any other state the instruction does not
    /// accept 409 `invalid_account_state`.
    static func checkState<I: Instruction>(_ account: WalletAccountRecord, accepts type: I.Type) throws(WalletProviderError) {
        let state = WalletAccountState(rawValue: account.state)
        if let state, I.allowedStates.contains(state) { return }
        if state == .blocked {
            throw WalletProviderError(.accountBlocked, "the account is blocked after too many wrong PINs; only PIN recovery is accepted")
        }
        throw WalletProviderError(.invalidAccountState, "\(I.name) is not accepted while the account is \(account.state)")
    }

    /// The account's PIN public key.
    static func pinKey(of account: WalletAccountRecord) -> JWK? {
        guard let text = account.pinPublicKey, let object = (try? JSONValue.parse(Array(text.utf8)))?.objectValue else { return nil }
        return try? JWK(json: object)
    }

    /// Whether the instruction's ES256 signature verifies with `key` (any `kid` in the header
    /// is the wallet's own label for it).
    static func verifies(_ jws: JWS, key: JWK) -> Bool {
        var candidate = key.keyMembersOnly
        if let kid = jws.keyID { candidate = candidate.adding(["kid": .string(kid)]) }
        return (try? jws.verify(keys: JWKSet(keys: [candidate]), allowList: [.ES256], expectedType: InstructionRequest.type,
                                requireKeyID: false)) != nil
    }

    func requireRemoteKeys() throws(WalletProviderError) {
        guard configuration.remoteKeys else {
            throw WalletProviderError(.notFound, "this wallet provider holds no keys for wallets (remote_keys is off)")
        }
    }
}

/// What an instruction's transaction ended with: a result, or a refusal committed with its writes.
private enum InstructionOutcome {
    case result(JSONValue)
    case refused(WalletProviderError)
}
