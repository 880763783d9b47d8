import Support
import ArgumentParser
import Federation
import Store
import Trustbed

struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage entity keys.", subcommands: [Rotate.self, Revoke.self])

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give an entity a new signing key; the old one stays published until its statements expire and is listed in historical keys. A running server picks it up within a second.")

        @Argument(help: "Entity name (file name in the entities directory without .json).") var name: String
        @OptionGroup var paths: StatePaths
        @Option(help: "Base URL of entity IDs (only used to read the entity files).") var baseURL = "http://127.0.0.1:8080"

        func run() throws {
            let entity = try Keys.entity(name, paths: paths, baseURL: baseURL)
            let database = try Database(path: paths.database)
            let (old, new) = try KeyManager.rotate(name: name, algorithm: entity.signingAlgorithm, lifetime: entity.lifetime,
                                                   directory: paths.keys, database: database, clock: SystemClock())
            try ChangeCounter.bump(database)
            print("\(name): new key \(new)" + (old.map { ", previous key \($0) is now historical" } ?? ""))
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke one of an entity's keys.",
            discussion: """
                The key leaves the entity's jwks at once (also a retired key that was still published) and \
                historical-keys lists it with "revoked": {"revoked_at", "reason"} (OpenID Federation 1.0 §8.7). \
                Revoking the ACTIVE key first rotates to a new signing key, so the entity can still sign, and then \
                revokes the old one. A running server picks the change up within a second. Unknown entity or kid: \
                exit status 1.
                """)

        @Argument(help: "Entity name (file name in the entities directory without .json).") var name: String
        @Argument(help: "Key ID (kid) to revoke.") var kid: String
        @Option(help: "Why: \(KeyRevocationReason.allCases.map(\.rawValue).joined(separator: ", ")) (OpenID Federation 1.0 §8.7.3; keyCompromise is read as compromised). Omitted: no reason is published.")
        var reason: KeyRevocationReason?
        @OptionGroup var paths: StatePaths
        @Option(help: "Base URL of entity IDs (only used to read the entity files).") var baseURL = "http://127.0.0.1:8080"

        func run() throws {
            let entity = try Keys.entity(name, paths: paths, baseURL: baseURL)
            let database = try Database(path: paths.database)
            let rotatedTo = try KeyManager.revoke(name: name, kid: kid, reason: reason, algorithm: entity.signingAlgorithm,
                                                  lifetime: entity.lifetime, directory: paths.keys, database: database, clock: SystemClock())
            try ChangeCounter.bump(database)
            print("\(name): key \(kid) revoked" + (rotatedTo.map { "; it was the active key, the new signing key is \($0)" } ?? ""))
        }
    }

    /// The entity's declaration; an unknown name is an operator error (exit status 1, not usage's 64).
    static func entity(_ name: String, paths: StatePaths, baseURL: String) throws -> HostedEntity {
        let catalog = try EntityCatalog.load(directory: paths.entities, baseURL: baseURL)
        guard let entity = catalog.entities.first(where: { $0.name == name }) else {
            throw KeyOperationError(description: "no entity named \(name) in \(paths.entities)")
        }
        return entity
    }
}

extension KeyRevocationReason: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}
