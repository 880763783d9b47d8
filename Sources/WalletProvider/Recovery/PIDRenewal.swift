import JSON
import Store

/// PID renewal (issue 21, item 4; the NL wallet's PID renewal, steps 1–8): an `active` account
/// whose PID expired or was revoked gets a new PID on new keys, and proves with its recovery
/// code that it is the same person before those keys count.
///
/// 1. `create_proofs {"renewal": true, "aud", "nonce"?, "count"?}` (`start`): refused with 403
///    `renewal_not_needed` while the account holds a live PID (status `valid` in its PID
///    Provider's status list, not expired: `AccountPIDRepository`); else, in the instruction's
///    transaction, the account goes `active` → `renewing` (the old state remembered), every
///    key it holds is disabled, and `count` new keys (purpose `renewal`) sign the proofs.
/// 2. `disclose_recovery_code` of the new PID (bound to a renewal key), matching
///    (`complete`): the other keys are enabled again, the renewal keys become ordinary ones,
///    and the account is back in the state it left (`active`).
/// 3. Mismatch (`abandon`): the renewal keys are deleted, the other keys enabled, the state
///    restored: the account is exactly as before step 1. The disclosure still answers 403
///    `recovery_code_mismatch`.
/// A retried `create_proofs {"renewal": true}` while `renewing` replaces the unused renewal keys.
public enum PIDRenewal {
    public static let keyPurpose = "renewal"

    /// `create_proofs`' `renewal` param: a boolean, and a renewal makes its own keys (no `key_ids`).
    static func parseFlag(_ params: JSONReader, keyIDs: [String]?) throws(JSONReadError) -> Bool {
        guard let renewal = try params.optionalBool("renewal") else { return false }
        if renewal, keyIDs != nil { throw params.invalid("key_ids", "a renewal makes new keys: send count, not key_ids") }
        return renewal
    }

    /// Step 1, inside `create_proofs`' transaction: the proofs' keys (new, purpose `renewal`).
    /// `renewal` is the param; `create_proofs` without it in `renewing` is refused (409).
    public static func start(_ renewal: Bool, count: Int, in context: InstructionContext) throws(WalletProviderError) -> [HeldKey] {
        guard renewal else {
            throw WalletProviderError(.invalidAccountState, "create_proofs is not accepted while the account is \(context.account.state) "
                                      + "(only a retried {\"renewal\": true})")
        }
        let provider = context.provider.entityID
        let account = context.account.id
        let records = context.heldKeyRecords
        if context.account.state == WalletAccountState.renewing.rawValue {
            try context.store { () throws(StoreError) in _ = try records.delete(provider: provider, account: account, purpose: keyPurpose) }
        } else {
            let standing = try context.store { () throws(StoreError) in
                try AccountPIDRepository(database: context.database).standing(provider: provider, account: account, now: context.now)
            }
            guard standing.live == 0 else {
                throw WalletProviderError(.renewalNotNeeded, "the account's PID is still valid (its status list says valid and it has not expired)")
            }
            let moved = try context.store { () throws(StoreError) in
                try context.accounts.transition(provider: provider, id: account, from: [WalletAccountState.active.rawValue],
                                                to: WalletAccountState.renewing.rawValue, rememberPrevious: true, now: context.now)
            }
            guard moved else { throw WalletProviderError(.invalidAccountState, "the account changed state meanwhile; retry") }
            try context.store { () throws(StoreError) in
                _ = try records.setEnabled(false, provider: provider, account: account, exceptPurpose: keyPurpose)
            }
        }
        context.provider.logger.info("account \(account) on \(provider): PID renewal started")
        return try context.generateKeys(count: count, purpose: keyPurpose)
    }

    /// Step 2: a matching disclosure of the PID bound to `pidKey`; returns the new state.
    public static func complete(in context: InstructionContext, pidKey: HeldKeyRecord) throws(WalletProviderError) -> WalletAccountState {
        guard pidKey.purpose == keyPurpose else {
            throw .refused("PID renewal needs the new PID, issued to one of the renewal's keys; this one is bound to another key")
        }
        let restored = try restore(in: context, keepRenewalKeys: true)
        context.provider.logger.info("account \(context.account.id) on \(context.provider.entityID): PID renewed")
        return restored
    }

    /// Step 3: a mismatching disclosure; returns the restored state.
    @discardableResult
    public static func abandon(in context: InstructionContext) throws(WalletProviderError) -> WalletAccountState {
        try restore(in: context, keepRenewalKeys: false)
    }

    private static func restore(in context: InstructionContext, keepRenewalKeys: Bool) throws(WalletProviderError) -> WalletAccountState {
        let provider = context.provider.entityID
        let account = context.account.id
        let previous = context.account.previousState.flatMap(WalletAccountState.init(rawValue:)) ?? .active
        try context.store { () throws(StoreError) in
            let records = context.heldKeyRecords
            if keepRenewalKeys {
                _ = try records.setPurpose(HeldKeyRecord.walletPurpose, provider: provider, account: account, from: keyPurpose)
            } else {
                _ = try records.delete(provider: provider, account: account, purpose: keyPurpose)
            }
            _ = try records.setEnabled(true, provider: provider, account: account)
            try context.accounts.setState(provider: provider, id: account, state: previous.rawValue, previousState: nil, now: context.now)
        }
        return previous
    }
}
