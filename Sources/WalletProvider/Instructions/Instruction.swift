import JOSE
import JSON
import Store
import Support

/// Who signs an instruction's JWT (`wp-instruction+jwt`). Nearly every instruction is signed
/// by the account's PIN key, and a wrong signature then counts as a wrong PIN; PIN recovery is
/// signed by the *new* PIN key it carries (the old one is forgotten or blocked), and a wrong
/// signature there is a refused request, not a PIN attempt.
public enum InstructionSigner: Sendable {
    case pinKey
    case key(JWK)
}

/// One instruction of `POST <wp>/instructions/<name>` (issue 21). To add one, declare a type in
/// its own file and append it to `InstructionRegistry.all`; the framework does the rest:
/// 1. reads `params` through `parseParams` (any `JSONReadError` is 400 `invalid_instruction`
///    naming the member; unknown members are ignored, so a later field can be added);
/// 2. checks the hardware signature, `aud`, `iat` and the challenge, then the account state
///    against `allowedStates` (`blocked` → 403 `account_blocked`, else 409
///    `invalid_account_state`), then the JWT's signature by `signer(for:account:)`;
/// 3. runs `prepare` outside any transaction (slow, read-only checks: verifying a PID);
/// 4. runs `perform` inside the one transaction that also spends the challenge and resets the
///    PIN count: throwing rolls all of it back, so a refused instruction burns nothing;
/// 5. answers `{"result": <JWT signed by the provider>}` with `perform`'s value as `result`.
public protocol Instruction: Sendable {
    associatedtype Params: Sendable
    associatedtype Prepared: Sendable = Params

    /// The path segment: `POST <wp>/instructions/<name>`.
    static var name: String { get }
    /// The account states the instruction is accepted in.
    static var allowedStates: Set<WalletAccountState> { get }
    static func parseParams(_ params: JSONReader) throws(JSONReadError) -> Params
    /// Who signs the instruction; `.pinKey` unless the instruction says otherwise.
    static func signer(for params: Params, account: WalletAccountRecord) throws(WalletProviderError) -> InstructionSigner
    /// Checks that need no write and may be slow, outside the transaction.
    static func prepare(_ params: Params, in context: InstructionContext) throws(WalletProviderError) -> Prepared
    /// The effect, inside the transaction that spends the challenge (`context.database`).
    static func perform(_ prepared: Prepared, in context: InstructionContext) throws(WalletProviderError) -> JSONValue
}

extension Instruction {
    public static func signer(for params: Params, account: WalletAccountRecord) throws(WalletProviderError) -> InstructionSigner { .pinKey }
}

extension Instruction where Prepared == Params {
    public static func prepare(_ params: Params, in context: InstructionContext) throws(WalletProviderError) -> Params { params }
}

/// What an instruction runs with: the provider, the account and instance it came from, and
/// the database (inside `perform`: the open transaction).
public struct InstructionContext: Sendable {
    public let provider: WalletProvider
    public let database: Database
    public let account: WalletAccountRecord
    public let instance: WalletInstanceRecord
    /// The challenge the instruction spends (a key-binding JWT's `nonce`, issue 21 item 2).
    public let challenge: String
    public let now: Int64
    /// Set by `refuseAfterCommit`: the error answered once the transaction has committed.
    let deferredRefusal = Locked<WalletProviderError?>(nil)

    init(provider: WalletProvider, database: Database, account: WalletAccountRecord, instance: WalletInstanceRecord, challenge: String,
         now: Int64) {
        self.provider = provider
        self.database = database
        self.account = account
        self.instance = instance
        self.challenge = challenge
        self.now = now
    }

    /// Keeps what `perform` wrote (and spends the challenge), then answers `error` instead of a
    /// result: for a refusal that must still change state (a renewal's mismatch deletes the new
    /// keys and restores the account). Throwing from `perform` instead rolls everything back.
    public func refuseAfterCommit(_ error: WalletProviderError) {
        deferredRefusal.withLock { $0 = error }
    }

    public var accounts: WalletAccountRepository { WalletAccountRepository(database: database) }
    public var heldKeyRecords: HeldKeyRepository { HeldKeyRepository(database: database) }
    public var heldKeys: HeldKeys { provider.heldKeys }

    /// A store call with its failure as the provider's error.
    public func store<T>(_ body: () throws(StoreError) -> T) throws(WalletProviderError) -> T {
        do throws(StoreError) { return try body() } catch { throw .store(error) }
    }

    /// `count` new keys for this account, stored (call it from `perform`).
    public func generateKeys(count: Int, purpose: String = HeldKeyRecord.walletPurpose, enabled: Bool = true) throws(WalletProviderError) -> [HeldKey] {
        var keys: [HeldKey] = []
        for _ in 0 ..< count {
            let key = try heldKeys.generate(account: account.id, purpose: purpose, enabled: enabled, now: now)
            try store { () throws(StoreError) in try heldKeyRecords.insert(key.record) }
            keys.append(key)
        }
        return keys
    }

    /// The account's enabled key with this id, unwrapped; another account's id, an unknown id or
    /// a disabled key is 400 `invalid_instruction` (`what` names the param).
    public func heldKey(_ id: String, what: String = "key_id") throws(WalletProviderError) -> HeldKey {
        guard let record = try store({ () throws(StoreError) in try heldKeyRecords.find(provider: provider.entityID, account: account.id, id: id) }) else {
            throw .invalidInstruction("\(what): this account holds no key \(id)")
        }
        guard record.enabled else { throw .invalidInstruction("\(what): the key \(id) is disabled") }
        return try heldKeys.unwrap(record)
    }

    /// A `key-attestation+jwt` (OpenID4VCI 1.0 Appendix D.1) for held keys, `nonce` = the
    /// issuer's c_nonce when given, and the keys recorded as this instance's (so a PID issued
    /// to them here makes the instance `valid`).
    public func keyAttestation(for keys: [HeldKey], nonce: String?) throws(WalletProviderError) -> String {
        let attestation = try provider.signKeyAttestation(keys: keys.map(\.jwk), cNonce: nonce, instance: instance, now: now)
        try store { () throws(StoreError) in
            try WalletInstanceRepository(database: database).recordAttestedKeys(
                provider: provider.entityID, instance: instance.id, thumbprints: keys.map { $0.jwk.thumbprint() }, now: now)
        }
        return attestation
    }

    /// OpenID4VCI 1.0 `jwt` key proofs (Appendix F.1, `openid4vci-proof+jwt`) by `keys`, each
    /// with the keys' attestation in its `key_attestation` header and `kid` = the key's index in
    /// its `attested_keys`, the form the PID Providers here and EUDI wallets use.
    public func proofs(keys: [HeldKey], audience: String, nonce: String?, clientID: String?) throws(WalletProviderError) -> (proofs: [String], keyAttestation: String) {
        let attestation = try keyAttestation(for: keys, nonce: nonce)
        var proofs: [String] = []
        for (index, key) in keys.enumerated() {
            var claims: [String: JSONValue] = ["aud": .string(audience), "iat": .int(now)]
            if let nonce { claims["nonce"] = .string(nonce) }
            if let clientID { claims["iss"] = .string(clientID) }
            do {
                proofs.append(try JWS.sign(header: ["typ": "openid4vci-proof+jwt", "kid": .string(String(index)),
                                                    "key_attestation": .string(attestation)],
                                           payloadBytes: JSONValue.object(claims).bytes, key: key.privateKey, algorithm: .ES256))
            } catch {
                throw WalletProviderError(.serverError, "a key proof could not be signed", cause: "\(error)")
            }
        }
        return (proofs, attestation)
    }
}
