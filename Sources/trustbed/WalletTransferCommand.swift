import ArgumentParser
import Foundation
import JSON
import Pages
import Support
import Wallet

/// `trustbed wallet transfer`: the NL wallet's device transfer (issue 21, item 5) between two
/// test wallet files, the destination (new phone) and the source (old phone), one command per
/// step so a person can watch each state (docs/cli.md, "Device transfer").
struct WalletTransferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer",
        abstract: "Move a test wallet's credentials to another wallet file through the Wallet Provider (NL device transfer).",
        discussion: """
        Destination (new wallet file): start → (wait) → receive → complete. Source (old wallet file): confirm <QR> → send → \
        status. Either side: cancel, status. Both files are NL accounts (`wallet register --pin`) of the same person \
        (same PID recovery code).
        """,
        subcommands: [TransferStart.self, TransferConfirm.self, TransferSend.self, TransferReceive.self, TransferComplete.self,
                      TransferCancel.self, TransferStatus.self])
}

/// What every step takes: the wallet file, its PIN, `--verbose`.
struct TransferOptions: ParsableArguments {
    @Option(help: "The test wallet file (default: $XDG_DATA_HOME/trustbed/wallet.json).") var wallet: String?
    @Option(help: "The wallet's PIN (its PIN key signs the instructions).") var pin: String
    @Flag(help: "Show every instruction and response (and the HTTP exchanges) on stderr.") var verbose = false
}

/// One transfer step's context: the wallet file, its NL account and the provider client.
struct TransferStep {
    var file: TestWalletFile
    let client: WalletProviderClient
    let tag: String
    let hardwareKey: HolderKey
    let pinKey: HolderKey
    let verbose: Bool

    init(_ options: TransferOptions) throws {
        file = try TestWalletFile.load(options.wallet ?? TestWalletFile.defaultPath())
        let instance = try file.nlInstance()
        let http = try WalletHTTP()
        if options.verbose { http.trace = walletLog }
        client = WalletProviderClient(provider: instance.provider, http: http)
        tag = instance.tag
        hardwareKey = instance.hardwareKey
        pinKey = try file.pinKey(pin: options.pin)
        verbose = options.verbose
    }

    /// The transfer the file is part of (`nl.transfer`).
    var transfer: [String: JSONValue] {
        get { file.nl["transfer"]?.objectValue ?? [:] }
        set { file.nl["transfer"] = .object(newValue) }
    }

    func sessionID() throws -> String {
        guard let id = transfer["session_id"]?.stringValue else {
            throw WalletError.usage("\(file.path) has no transfer session; start one (destination) or confirm one (source) first")
        }
        return id
    }

    /// Sends one instruction, printing it and its answer with `--verbose`; an error answer
    /// throws with the provider's JSON error.
    func instruction(_ name: String, _ params: [String: JSONValue]) throws -> [String: JSONValue] {
        if verbose { walletLog("instruction \(name) params \(JSONValue.object(params).serialized())") }
        let reply = try client.sendInstruction(name, params: params, tag: tag, signer: pinKey, hardwareKey: hardwareKey)
        if verbose { walletLog("← \(reply.status) \(reply.result.map { "result \($0.serialized())" } ?? reply.text)") }
        guard reply.status == 200, let result = reply.result?.objectValue else {
            throw WalletError.server(step: "instruction \(name)", status: reply.status, body: reply.text)
        }
        return result
    }

    /// Records a state the transfer passed through, prints it (stderr) and saves the file.
    mutating func passed(_ state: String, _ extra: [String: JSONValue] = [:]) throws {
        var record = transfer
        record["state"] = .string(state)
        for (name, value) in extra { record[name] = value }
        var states = record["states"]?.arrayValue ?? []
        if states.last?.stringValue != state { states.append(.string(state)) }
        record["states"] = .array(states)
        transfer = record
        try file.save()
        walletLog("transfer \(record["session_id"]?.stringValue ?? "?"): \(state)")
    }

    /// `complete_transfer` or `cancel_transfer`: the session ends either way, so the wallet file
    /// forgets the session's ephemeral key (nothing more will be encrypted to it).
    mutating func end(_ name: String, reaching state: String) throws {
        let result = try instruction(name, ["transfer_session_id": .string(try sessionID())])
        transfer["ephemeral_key"] = nil
        try passed(result["state"]?.stringValue ?? state)
        printSummary()
    }

    /// The command's result on stdout: the session, this side and the states so far.
    func printSummary(_ extra: [String: JSONValue] = [:]) {
        var out: [String: JSONValue] = ["transfer_session_id": transfer["session_id"] ?? .null, "role": transfer["role"] ?? .null,
                                        "state": transfer["state"] ?? .null, "states": transfer["states"] ?? .array([])]
        for (name, value) in extra { out[name] = value }
        print(JSONValue.object(out).serialized(pretty: true))
    }
}

/// The QR code in the terminal: two modules per character cell (upper and lower half blocks),
/// dark on light with the quiet zone, so a phone can scan it off the screen.
func terminalQR(_ code: QRCode) -> String {
    let zone = QRCode.quietZone, size = code.size + 2 * zone
    func dark(_ x: Int, _ y: Int) -> Bool {
        let mx = x - zone, my = y - zone
        return mx >= 0 && my >= 0 && mx < code.size && my < code.size && code.isDark(x: mx, y: my)
    }
    var lines: [String] = []
    for y in stride(from: 0, to: size, by: 2) {
        var line = ""
        for x in 0 ..< size {
            // Light modules are drawn (the terminal's background may be dark), dark ones left blank.
            switch (dark(x, y), y + 1 < size ? dark(x, y + 1) : false) {
            case (false, false): line += "█"
            case (false, true): line += "▀"
            case (true, false): line += "▄"
            case (true, true): line += " "
            }
        }
        lines.append(line)
    }
    return lines.joined(separator: "\n")
}
