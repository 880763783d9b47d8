import ArgumentParser
import Issuance
import JSON
import Store
import Support
import WalletProvider

/// `trustbed credentials`: the issued-credential records and their status (issue 7 item 10),
/// read and changed directly in the SQLite file, so it works with the server stopped too. A
/// running server shows a change at the status list URI at its next request.
struct CredentialsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credentials", abstract: "List issued credentials and change their status.",
        subcommands: [List.self, Status.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print issued credentials as JSON ({\"credentials\": [...]}, as GET <issuer>/admin/credentials).")

        @Option(help: "Only this persona's credentials.") var persona: String?
        @Option(help: "Only this issuer's credentials (its entity ID).") var issuer: String?
        @Option(help: "SQLite database file.") var database = "trustbed.sqlite"

        func run() throws {
            let records = try IssuedCredentialRepository(database: Database(path: database)).list(issuer: issuer, persona: persona)
            print(PIDProvider.credentialListJSON(records).serialized(pretty: true))
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set an issued credential's status: valid, invalid (revoked) or suspended. Unknown id: exit status 1.")

        @Argument(help: "Credential id (from `trustbed credentials list`).") var id: String
        @Argument(help: "valid, invalid or suspended.") var status: CredentialStatus
        @Option(help: "SQLite database file.") var database = "trustbed.sqlite"

        func run() throws {
            let file = try Database(path: database)
            let repository = IssuedCredentialRepository(database: file)
            guard try repository.setStatus(id: id, issuer: nil, status: status.value), let record = try repository.find(id: id) else {
                throw CredentialsCommandError(description: "no issued credential with id \(id) in \(database)")
            }
            // As the admin API does in process: a PID that stops (or starts again) counting
            // settles its wallet instance between `valid` and `operational` at a Wallet
            // Provider in this file (issue 20, item 8).
            if let provider = record.keyAttestationIssuer {
                try WalletInstanceValidity(database: file).pidWithdrawn(
                    provider: provider, keyThumbprint: record.keyThumbprint, now: SystemClock().now())
            }
            print(PIDProvider.credentialJSON(record).serialized(pretty: true))
        }
    }
}

struct CredentialsCommandError: Error, CustomStringConvertible {
    let description: String
}

extension CredentialStatus: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}
