import Support
import ArgumentParser
import Federation
import Store
import Trustbed

struct TrustMarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "trust-mark", abstract: "Manage issued trust marks.", subcommands: [Revoke.self])

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke the trust marks of a type an issuer gave a subject; status then says revoked. A running server picks it up within a second.")

        @Option(help: "Issuing entity (name or entity ID).") var issuer: String
        @Option(help: "Trust mark type.") var type: String
        @Option(help: "Subject entity (name or entity ID).") var subject: String
        @Option(help: "Reason recorded with the revocation.") var reason = "revoked by operator"
        @OptionGroup var paths: StatePaths
        @Option(help: "Base URL of entity IDs; must match the server's.") var baseURL = "http://127.0.0.1:8080"

        func run() throws {
            let catalog = try EntityCatalog.load(directory: paths.entities, baseURL: baseURL)
            let ids = catalog.idsByName
            let issuerID = ids[issuer] ?? issuer
            let subjectID = ids[subject] ?? subject
            guard let entity = catalog.entities.first(where: { $0.entityID == issuerID }) else {
                throw ValidationError("no entity \(issuer) in \(paths.entities)")
            }
            guard entity.trustMarksIssued.contains(where: { $0.trustMarkType == type && $0.subjects.contains(subjectID) }) else {
                throw ValidationError("\(issuer) does not issue \(type) to \(subject)")
            }
            let database = try Database(path: paths.database)
            let count = try TrustMarkRepository(database: database).revoke(
                issuer: issuerID, trustMarkType: type, subject: subjectID, at: SystemClock().now(), reason: reason)
            try ChangeCounter.bump(database)
            print("revoked \(type) for \(subjectID) (\(count) issued mark(s) now report revoked)")
        }
    }
}
