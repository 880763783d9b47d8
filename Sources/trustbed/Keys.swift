import Support
import ArgumentParser
import Federation
import Store
import Trustbed

struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage entity keys.", subcommands: [Rotate.self])

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give an entity a new signing key; the old one stays published until its statements expire and is listed in historical keys. A running server picks it up within a second.")

        @Argument(help: "Entity name (file name in the entities directory without .json).") var name: String
        @OptionGroup var paths: StatePaths
        @Option(help: "Base URL of entity IDs (only used to read the entity files).") var baseURL = "http://127.0.0.1:8080"

        func run() throws {
            let catalog = try EntityCatalog.load(directory: paths.entities, baseURL: baseURL)
            guard let entity = catalog.entities.first(where: { $0.name == name }) else {
                throw ValidationError("no entity named \(name) in \(paths.entities)")
            }
            let database = try Database(path: paths.database)
            let (old, new) = try KeyManager.rotate(name: name, algorithm: entity.signingAlgorithm, lifetime: entity.lifetime,
                                                   directory: paths.keys, database: database, clock: SystemClock())
            try ChangeCounter.bump(database)
            print("\(name): new key \(new)" + (old.map { ", previous key \($0) is now historical" } ?? ""))
        }
    }
}
