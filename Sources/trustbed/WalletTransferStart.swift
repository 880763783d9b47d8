import ArgumentParser
import Foundation
import JSON
import Pages
import Support
import Wallet

/// `wallet transfer start` (destination): the new phone's first recovery code disclosure,
/// which the provider answers with a transfer session when another active account holds the
/// same code; then the QR code the old phone scans (session id + a fresh P-256 public key).
struct TransferStart: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Destination: disclose the PID's recovery code, open a transfer session and show its QR code.",
        discussion: """
        The wallet file must be a newly registered NL account (`wallet register --pin`) holding an SD-JWT PID of the \
        same person as the source wallet. Prints the QR code's content (<wp>/transfer#s=<session id>&k=<public JWK>) on \
        stdout, the QR code itself on stderr, and writes it as PNG with --png. The ephemeral private key stays in the \
        wallet file until `transfer complete`. Run on a wallet whose recovery code no other active account holds (the \
        old phone, once), it only stores the code and says so: that account can then be a source.
        """)
    @OptionGroup var options: TransferOptions
    @Option(name: .customLong("app-version"), help: "This (destination) app's version; the source's may not be newer.")
    var appVersion = "1.0.0"
    @Option(help: "Write the QR code as PNG to this file.") var png: String?
    @Option(help: "PNG pixels per QR module.") var scale = 6

    func validate() throws {
        guard (1...32).contains(scale) else { throw ValidationError("--scale must be between 1 and 32") }
    }

    func run() throws {
        try runWalletCommand {
            var step = try TransferStep(options)
            let challenge = try step.client.instructionChallenge(tag: step.tag)
            let disclosure = try RecoveryCodeDisclosure.presentation(from: step.file.credentials, provider: step.client.provider,
                                                                     challenge: challenge)
            let params: [String: JSONValue] = ["sd_jwt": .string(disclosure), "app_version": .string(appVersion)]
            if step.verbose { walletLog("instruction disclose_recovery_code params \(JSONValue.object(params).serialized())") }
            let reply = try step.client.sendInstruction("disclose_recovery_code", params: params, tag: step.tag, signer: step.pinKey,
                                                        hardwareKey: step.hardwareKey, challenge: challenge)
            if step.verbose { walletLog("← \(reply.status) \(reply.result.map { "result \($0.serialized())" } ?? reply.text)") }
            guard reply.status == 200, let result = reply.result?.objectValue else {
                throw WalletError.server(step: "instruction disclose_recovery_code", status: reply.status, body: reply.text)
            }
            guard let id = result["transfer_session_id"]?.stringValue else {
                // No other active account holds the code: this was the account's own first
                // disclosure (the old phone's onboarding), which makes it a possible source.
                walletLog("no transfer session: no other active account holds this recovery code; it is now this account's "
                          + "(recovery_code \(result["recovery_code"]?.stringValue ?? "?")), so this wallet can be a transfer's source")
                print(JSONValue.object(result).serialized(pretty: true))
                return
            }
            let ephemeral = try HolderKey()
            let content = TransferQRContent(provider: step.client.provider, sessionID: id, publicKey: ephemeral.jwk)
            step.transfer = ["role": "destination", "session_id": .string(id), "ephemeral_key": .object(try ephemeral.privateJWK()),
                             "qr": .string(content.uri), "states": .array([])]
            try step.passed("created")
            let code = try QRCode(encoding: content.uri, level: .medium)
            walletLog(terminalQR(code))
            if let png {
                guard FileManager.default.createFile(atPath: png, contents: Data(code.png(scale: scale))) else {
                    throw WalletError.usage("cannot write \(png)")
                }
                walletLog("QR code (\(code.size)×\(code.size) modules) written to \(png)")
            }
            walletLog("on the source wallet: trustbed wallet transfer confirm --wallet OLD --pin PIN '\(content.uri)'")
            step.printSummary(["qr": .string(content.uri)])
        }
    }
}
