import JOSE
import JSON
import Store

/// `start_pin_recovery` (issue 21, item 3; the NL wallet's PIN recovery, steps 6–9):
/// `{"pin_public_key": <the new PIN key's P-256 public JWK>, "c_nonce"?: <the PID issuer's
/// c_nonce>, "aud": <the PID issuer>, "count"?: 1..10, "iss"?: <client_id>}`, signed by the
/// hardware key and the *new* PIN key (the old PIN is forgotten or blocked, so it cannot sign;
/// a wrong signature here is a refused request, never a PIN attempt). Accepted in `active` and
/// `blocked`, and again in `recovering_pin` (a retry after a lost answer: the unused recovery
/// keys of the earlier call are replaced).
///
/// In one transaction it stores the new PIN key as *pending* (the old one stays until a
/// matching disclosure, and no PIN works meanwhile: every instruction but
/// `disclose_recovery_code` refuses `recovering_pin`), remembers the state it came from, sets
/// `recovering_pin`, and makes `count` recovery keys (purpose `recovery`) with OpenID4VCI proofs
/// for the PID issuer, as `create_proofs` does. It answers
/// `{"state": "recovering_pin", "previous_state", "pin_certificate", "wallet_attestation", "wallet_attestation_key_id",
/// "proofs", "keys": [{"key_id", "jwk"}], "key_attestation"}`:
/// - `pin_certificate`: a `PINCertificate` binding the new PIN key to the account;
/// - `wallet_attestation`: a fresh one (the wallet attestation code of `<wp>/wallet-attestations`),
///   bound to a new key the provider holds for the account (`wallet_attestation_key_id`; the
///   wallet signs its PoPs with `sign`), as the NL backend holds the WIA key.
/// `disclose_recovery_code` of a PID issued to one of the recovery keys finishes the recovery
/// (`PINRecovery.complete`).
public enum StartPINRecoveryInstruction: Instruction {
    public struct Params: Sendable {
        public let pinKey: JWK
        public let nonce: String?
        public let audience: String
        public let count: Int
        public let clientID: String?
    }

    public static let name = "start_pin_recovery"
    public static let allowedStates: Set<WalletAccountState> = [.active, .blocked, .recoveringPIN]

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> Params {
        let field = try params.field("pin_public_key")
        guard let object = field.value.objectValue else { throw field.invalid("expected the new PIN key as a JWK object") }
        let jwk: JWK
        do throws(JOSEError) {
            jwk = try JWK(json: object)
            guard jwk.json["kty"]?.stringValue == "EC", jwk.json["crv"]?.stringValue == "P-256", jwk.json["d"] == nil else {
                throw JOSEError.malformed("expected a public EC P-256 JWK")
            }
            _ = try jwk.publicKey()
        } catch {
            throw field.invalid("expected the new PIN key as a public EC P-256 JWK: \(error)")
        }
        let count = try params.optionalInt("count") ?? 1
        guard count >= 1, count <= 10 else { throw params.invalid("count", "expected 1 to 10") }
        return Params(pinKey: jwk.keyMembersOnly, nonce: try params.optionalField("c_nonce")?.nonEmptyString(),
                      audience: try params.nonEmptyString("aud"), count: Int(count),
                      clientID: try params.optionalField("iss")?.nonEmptyString())
    }

    public static func signer(for params: Params, account: WalletAccountRecord) throws(WalletProviderError) -> InstructionSigner {
        .key(params.pinKey)
    }

    public static func perform(_ params: Params, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        // Only a disclosure matching a code stored before can prove the person came back.
        guard context.account.recoveryCodeHMAC != nil else {
            throw .refused("the account has no recovery code yet: disclose one (disclose_recovery_code) before a PIN can be recovered")
        }
        let provider = context.provider.entityID
        let account = context.account.id
        let pinKeyText = params.pinKey.jsonValue.serialized()
        let accounts = context.accounts
        if context.account.state == WalletAccountState.recoveringPIN.rawValue {
            // A retry: the earlier call's recovery keys were never used by a disclosure.
            _ = try context.store { () throws(StoreError) in
                try context.heldKeyRecords.delete(provider: provider, account: account, purpose: PINRecovery.keyPurpose)
            }
        } else {
            let moved = try context.store { () throws(StoreError) in
                try accounts.transition(provider: provider, id: account, from: [context.account.state],
                                        to: WalletAccountState.recoveringPIN.rawValue, rememberPrevious: true, now: context.now)
            }
            guard moved else { throw WalletProviderError(.invalidAccountState, "the account changed state meanwhile; retry") }
        }
        try context.store { () throws(StoreError) in
            try accounts.setPendingPINPublicKey(provider: provider, id: account, jwk: pinKeyText, now: context.now)
        }
        let keys = try context.generateKeys(count: params.count, purpose: PINRecovery.keyPurpose)
        let made = try context.proofs(keys: keys, audience: params.audience, nonce: params.nonce, clientID: params.clientID)
        let attestationKey = try context.generateKeys(count: 1)[0]
        let attestation = try context.provider.signWalletAttestation(key: attestationKey.jwk, thumbprint: attestationKey.jwk.thumbprint(),
                                                                      now: context.now)
        let certificate = try context.provider.sign(PINCertificate(
            provider: provider, account: account, instance: context.instance.id,
            hardwareKeyThumbprint: context.instance.hardwareJWKThumbprint, pinKey: params.pinKey, issuedAt: context.now))
        return [
            "state": .string(WalletAccountState.recoveringPIN.rawValue),
            // Where it came from (`active` or `blocked`; a retry's is the first call's).
            "previous_state": .string(context.account.state == WalletAccountState.recoveringPIN.rawValue
                ? context.account.previousState ?? "active" : context.account.state),
            "pin_certificate": .string(certificate),
            "wallet_attestation": .string(attestation),
            "wallet_attestation_key_id": .string(attestationKey.id),
            "proofs": .array(made.proofs.map(JSONValue.string)),
            "keys": .array(keys.map { ["key_id": .string($0.id), "jwk": $0.jwk.jsonValue] }),
            "key_attestation": .string(made.keyAttestation),
        ]
    }
}
