import ArgumentParser
import Cryptography
import Foundation
import Support
import Verification
import Wallet

/// `trustbed verify`: offline verification of what a wallet hands a relying party.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a presentation offline and print the report JSON.",
        subcommands: [VerifyAppleEnvelopeCommand.self])
}

/// `trustbed verify apple-envelope`: Apple's Verify with Wallet envelope, opened with the
/// merchant's encryption key and verified check by check (docs/verifier.md).
struct VerifyAppleEnvelopeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-envelope",
        abstract: "Open and verify Apple's identity envelope (APPLE-HPKE-v1); print the report JSON.",
        discussion: "Exits 0 when every check passed, 1 when the envelope was refused (the report says why).")

    @Option(help: "The request nonce the app passed to PassKit, base64 (standard or base64url).") var nonce: String
    @Option(name: .customLong("merchant-id"), help: "The merchant identifier of the request.") var merchantID: String
    @Option(name: .customLong("team-id"), help: "The Apple developer team identifier.") var teamID: String
    @Option(help: "The merchant's encryption private key (PKCS#8 PEM, EC P-256).") var key: String
    @Option(help: ArgumentHelp("Trusted IACA root certificate, PEM (repeatable; default: every Keys/*/issuer/iaca.pem, the demo PID Providers' roots).",
                               valueName: "ROOT.pem"))
    var iaca: [String] = []
    @Option(help: "Directory of entity keys, for the default IACA roots.") var keys = "Keys"
    @Argument(help: "The envelope: a file of its CBOR, or of its base64 text; - reads standard input.") var envelope: String

    func run() throws {
        let key: PrivateKey
        do { key = try PrivateKey(pem: try String(contentsOfFile: self.key, encoding: .utf8)) } catch {
            throw ValidationError("--key \(self.key): not a PKCS#8 PEM private key (\(error))")
        }
        guard let nonceBytes = lenientBase64(nonce), !nonceBytes.isEmpty else { throw ValidationError("--nonce is not base64") }
        let roots = try trustedRoots(iaca, keysDirectory: keys)
        let verifier = AppleIdentityVerifier(recipientKey: key, merchantID: merchantID, teamID: teamID, trustAnchors: roots)
        let report = verifier.verify(envelope: try readEnvelope(envelope), nonce: nonceBytes, at: Int64(Date().timeIntervalSince1970))
        print(report.json.serialized(pretty: true))
        if !report.verified { throw ExitCode(1) }
    }
}

/// `trustbed wallet apple-envelope`: the envelope an iPhone would send, from the wallet file's mdoc.
struct WalletAppleEnvelopeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-envelope",
        abstract: "Make Apple's identity envelope (APPLE-HPKE-v1) from an mdoc in the wallet file, sealed to a merchant's certificate.",
        discussion: """
        The envelope holds {"identity": DeviceResponse} with the requested elements, device-signed over the Apple \
        SessionTranscript and HPKE-sealed to the recipient. Prints its base64 (or writes its CBOR with --out).
        """)

    @Option(help: "The test wallet file (default: $XDG_DATA_HOME/trustbed/wallet.json).") var wallet: String?
    @Option(help: "The request nonce, base64 (standard or base64url).") var nonce: String
    @Option(name: .customLong("merchant-id"), help: "The merchant identifier.") var merchantID: String
    @Option(name: .customLong("team-id"), help: "The Apple developer team identifier.") var teamID: String
    @Option(help: "The merchant's encryption certificate (PEM, EC P-256): the HPKE recipient.") var recipient: String
    @Option(parsing: .upToNextOption,
            help: ArgumentHelp("Elements to disclose: `name` (in the docType's nameSpace) or `nameSpace/name`; default: all.",
                               valueName: "element"))
    var elements: [String] = []
    @Option(help: "The mdoc's docType (default: the EUDI PID, else the first mdoc).") var docType: String?
    @Option(help: "Write the envelope's CBOR to this file instead of printing its base64.") var out: String?

    func run() throws {
        do {
            guard let nonceBytes = lenientBase64(nonce), !nonceBytes.isEmpty else { throw ValidationError("--nonce is not base64") }
            let certificate: Certificate
            do { certificate = try Certificate(pem: try String(contentsOfFile: recipient, encoding: .utf8)) } catch {
                throw ValidationError("--recipient \(recipient): not a PEM certificate (\(error))")
            }
            let file = try TestWalletFile.load(wallet ?? TestWalletFile.defaultPath())
            let mdoc = try StoredMDoc.first(in: file, docType: docType)
            let envelope = try AppleEnvelopeMaker.make(
                mdoc: mdoc, elements: mdoc.selection(elements), recipient: try certificate.publicKey(), nonce: nonceBytes,
                merchantID: merchantID, teamID: teamID)
            if let out {
                guard FileManager.default.createFile(atPath: out, contents: Data(envelope)) else {
                    throw ValidationError("cannot write \(out)")
                }
                walletLog("envelope (\(envelope.count) bytes, \(mdoc.docType)) written to \(out)")
            } else {
                print(Data(envelope).base64EncodedString())
            }
        } catch let error as ValidationError {
            throw error
        } catch {
            walletLog("error: \(error)")
            throw ExitCode(1)
        }
    }
}

/// Standard base64 or base64url, padded or not.
func lenientBase64(_ text: String) -> [UInt8]? {
    var url = ""
    for character in text where !character.isWhitespace {
        switch character {
        case "+": url.append("-")
        case "/": url.append("_")
        case "=": continue
        default: url.append(character)
        }
    }
    return Base64URL.decode(url)
}

/// The envelope file's bytes: its base64 text when it is that, else the raw CBOR.
private func readEnvelope(_ path: String) throws -> [UInt8] {
    let data: Data
    if path == "-" {
        data = FileHandle.standardInput.readDataToEndOfFile()
    } else {
        guard let contents = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
        data = contents
    }
    if let text = String(data: data, encoding: .utf8), let decoded = lenientBase64(text), !decoded.isEmpty { return decoded }
    return Array(data)
}

/// `--iaca` files, or every `<keys>/*/issuer/iaca.pem` (the demo PID Providers' IACA roots).
private func trustedRoots(_ files: [String], keysDirectory: String) throws -> [Certificate] {
    var paths = files
    if paths.isEmpty {
        let entities = (try? FileManager.default.contentsOfDirectory(atPath: keysDirectory)) ?? []
        paths = entities.sorted().map { "\(keysDirectory)/\($0)/issuer/iaca.pem" }.filter { FileManager.default.fileExists(atPath: $0) }
        guard !paths.isEmpty else {
            throw ValidationError("no IACA root: pass --iaca ROOT.pem (no \(keysDirectory)/*/issuer/iaca.pem found)")
        }
    }
    var roots: [Certificate] = []
    for path in paths {
        do { roots += try Certificate.certificates(pem: try String(contentsOfFile: path, encoding: .utf8)) } catch {
            throw ValidationError("--iaca \(path): \(error)")
        }
    }
    return roots
}
