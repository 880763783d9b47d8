import ArgumentParser
import Foundation
import JSON
import Pages
import Support
import Wallet

/// `wallet transfer confirm <QR>` (source): joins the destination's session.
struct TransferConfirm: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm", abstract: "Source: confirm the session of the destination's QR code (the account becomes transferring).")
    @OptionGroup var options: TransferOptions
    @Argument(help: "The destination's QR code content (<wp>/transfer#s=…&k=…), as `transfer start` printed it.") var qr: String
    @Option(name: .customLong("app-version"), help: "This (source) app's version; the destination's must be at least this.")
    var appVersion = "1.0.0"

    func run() throws {
        try runWalletCommand {
            var step = try TransferStep(options)
            let content = try TransferQRContent.parse(qr)
            guard content.provider == step.client.provider else {
                throw WalletError.usage("the QR code is for \(content.provider), this wallet's provider is \(step.client.provider)")
            }
            let result = try step.instruction("confirm_transfer_session",
                                              ["transfer_session_id": .string(content.sessionID), "app_version": .string(appVersion)])
            step.transfer = ["role": "source", "session_id": .string(content.sessionID), "recipient_key": .object(content.publicKey),
                             "states": .array([])]
            try step.passed(result["state"]?.stringValue ?? "ready_for_transfer")
            step.printSummary()
        }
    }
}

/// `wallet transfer send` (source): the credentials, encrypted to the destination's key.
struct TransferSend: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send", abstract: "Source: send the wallet file's credentials, encrypted to the destination's key (ECDH-ES + A256GCM).")
    @OptionGroup var options: TransferOptions

    func run() throws {
        try runWalletCommand {
            var step = try TransferStep(options)
            let id = try step.sessionID()
            guard step.transfer["role"]?.stringValue == "source", let key = step.transfer["recipient_key"]?.objectValue else {
                throw WalletError.usage("\(step.file.path) is not the source of a transfer (run `transfer confirm` on it)")
            }
            let payload = try WalletTransferPayload.seal(credentials: step.file.credentials, to: key)
            walletLog("payload: \(step.file.credentials.count) credential(s), a \(payload.utf8.count)-byte JWE")
            let result = try step.instruction("send_wallet_payload", ["transfer_session_id": .string(id), "encrypted_payload": .string(payload)])
            try step.passed(result["state"]?.stringValue ?? "ready_for_download")
            step.printSummary()
        }
    }
}

/// `wallet transfer receive` (destination): waits for the payload, decrypts it, stores it.
struct TransferReceive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive", abstract: "Destination: fetch the source's payload (polling while pending), decrypt it and store the credentials.")
    @OptionGroup var options: TransferOptions
    @Option(help: "Seconds to keep polling while the source has not sent yet (0: ask once).") var wait = 0
    @Option(help: "Seconds between polls.") var interval = 2

    func run() throws {
        try runWalletCommand {
            var step = try TransferStep(options)
            let id = try step.sessionID()
            guard step.transfer["role"]?.stringValue == "destination" else {
                throw WalletError.usage("\(step.file.path) is not the destination of a transfer (run `transfer start` on it)")
            }
            let deadline = Date().addingTimeInterval(TimeInterval(max(0, wait)))
            while true {
                let result = try step.instruction("receive_payload", ["transfer_session_id": .string(id)])
                switch result["state"]?.stringValue {
                case "ready":
                    guard let payload = result["encrypted_payload"]?.stringValue else {
                        throw WalletError.malformed("receive_payload: ready without encrypted_payload")
                    }
                    guard let key = step.transfer["ephemeral_key"]?.objectValue else {
                        throw WalletError.usage("\(step.file.path) no longer has the transfer's ephemeral key (the transfer was cancelled here)")
                    }
                    let credentials = try WalletTransferPayload.open(payload, with: try HolderKey(privateJWK: key))
                    step.file.credentials += credentials
                    try step.passed("ready_for_download", ["received": .int(Int64(credentials.count))])
                    walletLog("decrypted \(credentials.count) credential(s) into \(step.file.path); run `transfer complete` to finish")
                    step.printSummary(["credentials": .int(Int64(credentials.count))])
                    return
                case "cancelled":
                    try step.passed("cancelled")
                    step.printSummary()
                    throw ExitCode(1)
                default:
                    if step.transfer["state"]?.stringValue != "pending" { try step.passed("pending") }
                    guard Date() < deadline else { step.printSummary(); return }
                    Thread.sleep(forTimeInterval: TimeInterval(max(1, interval)))
                }
            }
        }
    }
}

/// `wallet transfer complete` (destination): the source's keys become this account's.
struct TransferComplete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "complete", abstract: "Destination: finish the transfer (the source account becomes transferred).")
    @OptionGroup var options: TransferOptions

    func run() throws {
        try runWalletCommand {
            var step = try TransferStep(options)
            try step.end("complete_transfer", reaching: "completed")
        }
    }
}

/// `wallet transfer cancel` (either side).
struct TransferCancel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Either side: cancel the transfer (the source account is active again).")
    @OptionGroup var options: TransferOptions

    func run() throws {
        try runWalletCommand {
            var step = try TransferStep(options)
            try step.end("cancel_transfer", reaching: "cancelled")
        }
    }
}

/// `wallet transfer status` (either side; the source polls it after `send`).
struct TransferStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Either side: the session's state as check_transfer_status gives it (pending, cancelled, completed).")
    @OptionGroup var options: TransferOptions
    @Option(help: "Seconds to keep polling while pending (0: ask once).") var wait = 0
    @Option(help: "Seconds between polls.") var interval = 2

    func run() throws {
        try runWalletCommand {
            var step = try TransferStep(options)
            let id = try step.sessionID()
            let deadline = Date().addingTimeInterval(TimeInterval(max(0, wait)))
            while true {
                let state = try step.instruction("check_transfer_status", ["transfer_session_id": .string(id)])["state"]?.stringValue ?? "?"
                if state != "pending" || Date() >= deadline {
                    if state != "pending" {
                        try step.passed(state)
                        if state == "completed", step.transfer["role"]?.stringValue == "source" {
                            walletLog("this wallet moved to the destination; its account is transferred and gets no more attestations")
                        }
                    }
                    step.printSummary(["status": .string(state)])
                    return
                }
                Thread.sleep(forTimeInterval: TimeInterval(max(1, interval)))
            }
        }
    }
}
