import JOSE
import JSON
import SDJWT
import Store

/// `disclose_recovery_code` `{"sd_jwt": <SD-JWT VC PID presentation disclosing only
/// recovery_code>}` (issue 21, item 2). Checked outside the transaction (`prepare`):
/// - the PID's issuer is trusted (`WalletProvider.pidIssuerKeys`: federation `jwks` through the
///   provider's Trust Anchors, or an `x5c` chaining to `pid_issuer_roots`), its signature, `typ`
///   `dc+sd-jwt`, `exp`/`nbf`;
/// - exactly one disclosure, `recovery_code` (more is refused: the provider learns nothing else);
/// - `cnf.jwk` is a key this account holds, else a key-binding JWT with `aud` = the provider and
///   `nonce` = the instruction's challenge proves possession of the device key;
/// - the PID's status (Token Status List) is valid, read from the issued-credential records of
///   the PID Providers on this server (a PID issued elsewhere with a status cannot be checked
///   here and is refused);
/// - the code is not on `recovery_code_deny_list`.
/// Then, in the transaction: the first disclosure stores the code's HMAC; later ones must match
/// (`RecoveryCodeOutcome`), a mismatch is 403 `recovery_code_mismatch`, leaves the account as it
/// was, and writes one security-event log line (never the code). `RecoveryCodeTransitions` may
/// answer instead. Refusals of the PID are 403 `invalid_request`; an unreadable one 400
/// `invalid_instruction`.
public enum DiscloseRecoveryCodeInstruction: Instruction {
    public struct Params: Sendable {
        public let sdJWT: String
    }

    public struct Prepared: Sendable {
        public let hmac: String
        public let issuer: String
        public let keyThumbprint: String
        public let heldKey: HeldKeyRecord?
    }

    public static let name = "disclose_recovery_code"
    public static let allowedStates: Set<WalletAccountState> = [.active, .recoveringPIN, .renewing]

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> Params {
        Params(sdJWT: try params.nonEmptyString("sd_jwt"))
    }

    /// While a PIN recovery waits for this disclosure the old PIN is unusable: the pending PIN
    /// key signs it.
    public static func signer(for params: Params, account: WalletAccountRecord) throws(WalletProviderError) -> InstructionSigner {
        if account.state == WalletAccountState.recoveringPIN.rawValue, let pending = account.pendingPINPublicKey,
           let object = (try? JSONValue.parse(Array(pending.utf8)))?.objectValue, let key = try? JWK(json: object) {
            return .key(key)
        }
        return .pinKey
    }

    public static func prepare(_ params: Params, in context: InstructionContext) throws(WalletProviderError) -> Prepared {
        let provider = context.provider
        let presentation: SDJWT
        let issuerJWT: JWS
        let unverified: [String: JSONValue]
        do {
            presentation = try SDJWT.parse(params.sdJWT)
            issuerJWT = try presentation.parsedIssuerJWT()
            unverified = try issuerJWT.payload()
        } catch {
            throw .invalidInstruction("params.sd_jwt is not an SD-JWT: \(error)")
        }
        guard let issuer = unverified["iss"]?.stringValue, !issuer.isEmpty else { throw .refused("the PID has no iss") }
        let issuerKeys = try provider.pidIssuerKeys(issuer: issuer, header: issuerJWT.header, now: context.now)
        let policy = SDJWTVerificationPolicy(now: context.now)
        let verified: VerifiedSDJWT
        do { verified = try presentation.verify(issuerKeys: issuerKeys, policy: policy) } catch {
            throw .refused("the PID does not verify: \(error)")
        }
        guard verified.disclosed.count == 1, verified.disclosed[0].path == JSONPath("recovery_code") else {
            throw .refused("disclose recovery_code and nothing else (\(verified.disclosed.count) disclosures: "
                + verified.disclosed.map { $0.path.description }.joined(separator: ", ") + ")")
        }
        guard let code = verified.claims["recovery_code"]?.stringValue, !code.isEmpty else {
            throw .refused("the PID's recovery_code is not a string")
        }
        guard let cnf = verified.claims["cnf"]?["jwk"]?.objectValue, let key = try? JWK(json: cnf) else {
            throw .refused("the PID has no cnf.jwk")
        }
        let thumbprint = key.thumbprint()
        let held = try context.store { () throws(StoreError) in
            try context.heldKeyRecords.find(provider: provider.entityID, account: context.account.id, thumbprint: thumbprint)
        }
        if held == nil {
            guard presentation.keyBindingJWT != nil else {
                throw .refused("the PID is bound to a key this account does not hold; add a key-binding JWT (aud = \(provider.entityID), nonce = the instruction's challenge)")
            }
            do {
                _ = try presentation.verifyKeyBinding(of: verified, expectation: KeyBindingExpectation(audience: provider.entityID,
                                                                                                     nonce: context.challenge),
                                                      policy: policy)
            } catch {
                throw .refused("the key-binding JWT: \(error)")
            }
        }
        if let reference = verified.claims["status"]?["status_list"] {
            guard let uri = reference["uri"]?.stringValue, let index = reference["idx"]?.intValue else {
                throw .refused("the PID's status.status_list must have uri and idx")
            }
            let status = try context.store { () throws(StoreError) in
                try context.accounts.credentialStatus(uri: uri, index: index)
            }
            guard let status else { throw .refused("the PID's status cannot be checked: it was not issued on this server") }
            guard status == 0 else { throw .refused("the PID is revoked or suspended (status \(status))") }
        }
        guard !provider.configuration.recoveryCodeDenyList.contains(code) else {
            throw .refused("this recovery code is refused (recovery_code_deny_list)")
        }
        return Prepared(hmac: provider.recoveryCodeHMAC(code), issuer: issuer, keyThumbprint: thumbprint, heldKey: held)
    }

    public static func perform(_ prepared: Prepared, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        let outcome = try context.recordRecoveryCode(hmac: prepared.hmac)
        if outcome == .mismatch {
            // One security event; the code and its HMAC stay out of the log.
            context.provider.logger.warning("security event: recovery_code_mismatch for account \(context.account.id) on \(context.provider.entityID)")
        }
        let disclosure = RecoveryCodeDisclosure(hmac: prepared.hmac, outcome: outcome, issuer: prepared.issuer,
                                                keyThumbprint: prepared.keyThumbprint, heldKey: prepared.heldKey)
        for transition in RecoveryCodeTransitions.all {
            if let answer = try transition.afterDisclosure(disclosure, in: context) { return answer }
        }
        switch outcome {
        case .mismatch:
            throw WalletProviderError(.recoveryCodeMismatch, "the disclosed recovery code is not this account's")
        case .matched:
            return ["recovery_code": "matched", "account_state": .string(context.account.state)]
        case .stored, .heldByOtherAccount:
            return ["recovery_code": "stored", "account_state": .string(context.account.state)]
        }
    }
}
