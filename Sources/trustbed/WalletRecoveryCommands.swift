import ArgumentParser
import Foundation
import JSON
import Wallet

/// `trustbed wallet pin-recovery` and `trustbed wallet renew` (issue 21, items 3, 4 and 7): the NL
/// recovery flows of a wallet file registered with `--pin` (docs/wallet-provider.md, "PIN
/// recovery" and "PID renewal"). Progress, with every state the account passes through, goes to
/// stderr; the summary (JSON) to stdout.
struct WalletPINRecoveryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin-recovery",
        abstract: "Recover a forgotten or blocked PIN with a fresh PID of the same person (NL accounts).",
        discussion: """
        <offer> is a PID Provider's pre-authorized credential offer for the account's person. Token (with the \
        claims preview) → the preview's recovery code is compared with the stored PID's → start_pin_recovery \
        signed by the hardware key and the NEW PIN key (account: recovering_pin; recovery keys, their proofs, a \
        PIN certificate and a wallet attestation) → the PID on the recovery keys → disclose_recovery_code \
        (account: active, the new PIN in force). Works from active or blocked.
        """)

    @Option(name: .customLong("new-pin"), help: "The new PIN (its key is derived with a fresh salt; the PIN is never stored).")
    var newPIN: String
    @OptionGroup var flow: NLRecoveryArguments

    func validate() throws {
        guard !newPIN.isEmpty else { throw ValidationError("--new-pin must not be empty") }
    }

    func run() throws {
        var options = flow.options
        options.newPIN = newPIN
        try flow.run { try NLRecoveryFlow(options: options).pinRecovery() }
    }
}

struct WalletRenewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "renew",
        abstract: "Renew an expired or revoked PID on new provider-held keys (NL accounts).",
        discussion: """
        Token (with the claims preview) → recovery-code check → create_proofs {"renewal": true} signed by the PIN \
        (account: renewing, every other key disabled; refused with renewal_not_needed while the PID is valid) → \
        the new PID → disclose_recovery_code (account: active, the keys enabled again). The new PID is stored in \
        the wallet file with the ids of its provider-held keys.
        """)

    @Option(help: "The account's PIN.") var pin: String
    @OptionGroup var flow: NLRecoveryArguments

    func validate() throws {
        guard !pin.isEmpty else { throw ValidationError("--pin must not be empty") }
    }

    func run() throws {
        let options = flow.options
        try flow.run { try NLRecoveryFlow(options: options).renew(pin: pin) }
    }
}

/// The arguments both recovery flows take, and how they run: the summary to stdout, an error to
/// stderr with exit code 1.
struct NLRecoveryArguments: ParsableArguments {
    @Argument(help: "The PID Provider's credential offer (URL, credential_offer_uri or JSON).") var offer: String
    @Option(name: .customLong("tx-code"), help: "The offer's transaction code, when it has one.") var txCode: String?
    @Option(help: "New provider-held keys (one proof and PID each) to ask for, 1 to 10.") var count = 1
    @Flag(name: .customLong("continue-on-mismatch"),
          help: "Go on although the preview's recovery code is not the stored PID's (to see the Wallet Provider refuse it).")
    var continueOnMismatch = false
    @Option(help: "The test wallet file (default: $XDG_DATA_HOME/trustbed/wallet.json).") var wallet: String?
    @Flag(help: "Log every request and response, instructions included, to stderr.") var verbose = false

    func validate() throws {
        guard (1...10).contains(count) else { throw ValidationError("--count must be between 1 and 10") }
    }

    var options: NLRecoveryOptions {
        var options = NLRecoveryOptions(offer: offer)
        options.txCode = txCode
        options.count = count
        options.continueOnMismatch = continueOnMismatch
        options.walletPath = wallet
        options.verbose = verbose
        options.log = walletLog
        return options
    }

    func run(_ flow: () throws -> JSONValue) throws {
        try runWalletCommand { print(try flow().serialized(pretty: true)) }
    }
}
