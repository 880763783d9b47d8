import ArgumentParser
import Foundation
import JSON
import MDoc
import Pages
import SDJWT
import Verification
import Wallet

/// `trustbed wallet qr --pixelpass`: a stored credential as Inji shares it offline, PixelPass text
/// (zlib level 9 + base45; JSON is CBOR-encoded first) and a QR code of it (docs/cli.md).
struct WalletQRCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qr",
        abstract: "Render a stored credential as a PixelPass QR code (MOSIP Inji's offline sharing).",
        discussion: """
        Prints the PixelPass text (what the QR code holds) on stdout; --png writes the QR code (error correction L, \
        as MOSIP's pixelpass draws it). A verifier reads it at POST <rp>/verify/pixelpass. The QR code is a static \
        copy: no key binding or device signature is possible, so anyone holding the picture can show it.
        """)

    @Flag(help: "PixelPass encoding (zlib level 9 + base45, CBOR first for JSON). Required: the only encoding offered.")
    var pixelpass = false
    @Option(help: "The test wallet file (default: $XDG_DATA_HOME/trustbed/wallet.json).") var wallet: String?
    @Option(help: "Which stored credential: its credential_configuration_id, its format (dc+sd-jwt, mso_mdoc) or its 1-based position (default: the first).")
    var credential: String?
    @Option(parsing: .upToNextOption,
            help: ArgumentHelp("""
                Keep only these claims (SD-JWT VC: a disclosure path such as given_name or address.locality; mdoc: an \
                element, or nameSpace/element); default: the whole credential. A QR code holds about 4,300 base45 \
                characters, so a PID with its portrait needs a selection.
                """, valueName: "claim"))
    var disclose: [String] = []
    @Option(help: "Write the QR code as PNG to this file.") var png: String?
    @Option(help: "PNG pixels per QR module.") var scale = 4

    func validate() throws {
        guard pixelpass else { throw ValidationError("--pixelpass is required (the only QR encoding offered)") }
        guard (1...32).contains(scale) else { throw ValidationError("--scale must be between 1 and 32") }
    }

    func run() throws {
        let file: TestWalletFile
        do { file = try TestWalletFile.load(wallet ?? TestWalletFile.defaultPath()) } catch {
            throw ValidationError("\(error)")
        }
        let text = try Self.reduce(try Self.select(credential, in: file), to: disclose.flatMap { $0.split(separator: ",").map(String.init) })
        let encoded = PixelPass.encode(text)
        if let png {
            let code: QRCode
            do { code = try QRCode(encoding: encoded, level: .low) } catch {
                walletLog("error: the PixelPass text (\(encoded.utf8.count) characters) do not fit in a QR code (about 4,300 at most); keep fewer claims with --disclose")
                throw ExitCode(1)
            }
            guard FileManager.default.createFile(atPath: png, contents: Data(code.png(scale: scale))) else {
                throw ValidationError("cannot write \(png)")
            }
            walletLog("QR code (\(code.size)×\(code.size) modules, \(encoded.utf8.count) characters) written to \(png)")
        }
        print(encoded)
    }

    /// The credential with only the `claims` disclosed: an SD-JWT VC loses the other disclosures
    /// (RFC 9901 §5.2: still the issuer's signature, the undisclosed digests stay hidden), an mdoc
    /// the other IssuerSignedItems (their digests stay in the MSO). Nothing selected: unchanged.
    static func reduce(_ text: String, to claims: [String]) throws -> String {
        guard !claims.isEmpty else { return text }
        if text.contains("~") {
            let sdJWT = try SDJWT.parse(text)
            let kept = try sdJWT.presentation(disclosing: Set(claims))
            let names = Set(try kept.disclosedClaims().map(\.path.description))
            let missing = claims.filter { !names.contains($0) }
            guard missing.isEmpty else { throw ValidationError("the credential discloses no \(missing.joined(separator: ", "))") }
            return kept.serialized
        }
        let issuerSigned = try IssuerSigned(base64URL: text)
        let docType = try issuerSigned.unverifiedMobileSecurityObject().docType
        var wanted: [String: Set<String>] = [:]
        for claim in claims {
            let parts = claim.split(separator: "/", maxSplits: 1).map(String.init)
            wanted[parts.count == 2 ? parts[0] : docType, default: []].insert(parts.last ?? claim)
        }
        var nameSpaces: [String: [IssuerSignedItemBytes]] = [:]
        for (nameSpace, identifiers) in wanted {
            let items = (issuerSigned.nameSpaces[nameSpace] ?? []).filter { identifiers.contains($0.item.elementIdentifier) }
            let missing = identifiers.subtracting(items.map(\.item.elementIdentifier))
            guard missing.isEmpty else { throw ValidationError("the mdoc has no \(missing.sorted().joined(separator: ", ")) in \(nameSpace)") }
            nameSpaces[nameSpace] = items
        }
        return IssuerSigned(nameSpaces: nameSpaces, issuerAuth: issuerSigned.issuerAuth).base64URL
    }

    /// The stored credential's text: by configuration id, format or 1-based position.
    static func select(_ wanted: String?, in file: TestWalletFile) throws -> String {
        let entries = file.credentials.compactMap(\.objectValue)
        guard !entries.isEmpty else {
            throw ValidationError("\(file.path) holds no credentials (receive one with `trustbed wallet receive ... --wallet FILE`)")
        }
        let entry: [String: JSONValue]?
        if let wanted, let position = Int(wanted) {
            entry = (1...entries.count).contains(position) ? entries[position - 1] : nil
        } else if let wanted {
            entry = entries.first { $0["credential_configuration_id"]?.stringValue == wanted }
                ?? entries.first { $0["format"]?.stringValue == wanted }
        } else {
            entry = entries.first
        }
        guard let entry else {
            let known = entries.enumerated().map { "\($0.offset + 1): \($0.element["credential_configuration_id"]?.stringValue ?? "?") (\($0.element["format"]?.stringValue ?? "?"))" }
            throw ValidationError("no stored credential \(wanted ?? ""); the wallet holds " + known.joined(separator: ", "))
        }
        guard let text = entry["credential"]?.stringValue else {
            throw ValidationError("the stored credential has no credential text")
        }
        return text
    }
}
