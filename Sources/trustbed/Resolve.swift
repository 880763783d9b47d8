import Support
import ArgumentParser
import Federation
import Foundation
import JOSE
import JSON

/// The CLI's client commands fetch over HTTP(S) from wherever their user points them, with the
/// fetcher's timeouts and size limit, and keep statements in memory for the one command.
func clientSource() -> RemoteStatementSource {
    RemoteStatementSource(fetcher: HTTPStatementFetcher.allowingEverything(), clock: SystemClock())
}

struct Resolve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Resolve an entity's trust chain and metadata against a trust anchor, over HTTP, as a client of any federation.")

    @Argument(help: "Entity ID to resolve.") var entityID: String
    @Option(help: "Entity ID of the trust anchor.") var trustAnchor: String
    @Option(help: "JWK Set file with the trust anchor's keys (default: trust the keys its configuration publishes).")
    var trustAnchorJWKS: String?
    @Option(help: "Only show metadata of this entity type (repeatable).") var entityType: [String] = []

    func run() throws {
        let resolver = TrustResolver(source: clientSource(), clock: SystemClock())
        var keys = TrustAnchorKeys.selfPublished
        if let file = trustAnchorJWKS {
            guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
            keys = .known(try JWKSet(json: try JSONValue.parse(Array(data))))
        }
        let chain: TrustChain
        do {
            chain = try resolver.resolve(subject: entityID, anchors: [trustAnchor: keys])
        } catch {
            FileHandle.standardError.write(Data("trustbed resolve: \(error)\n".utf8))
            throw ExitCode(2)
        }
        var metadata = chain.resolvedMetadata
        if !entityType.isEmpty { metadata = metadata.filter { entityType.contains($0.key) } }
        let out: JSONValue = [
            "sub": .string(entityID),
            "trust_anchor": .string(trustAnchor),
            "exp": .int(chain.expiresAt),
            "metadata": .object(metadata),
            "chain": .array(chain.statements.map { ["iss": .string($0.issuer), "sub": .string($0.subject), "exp": .int($0.expiresAt)] }),
            "trust_chain": JSONValue(chain.compactStatements),
        ]
        print(out.serialized(pretty: true))
    }
}

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate a live entity over HTTP and report every problem found (exit 1 if any).")

    @Argument(help: "Entity ID to check.") var entityID: String

    func run() throws {
        let findings = EntityChecker(source: clientSource(), clock: SystemClock()).check(entityID: entityID)
        findings.forEach { print($0) }
        let problems = findings.filter { !$0.ok }.count
        print(problems == 0 ? "\(entityID): no problems found" : "\(entityID): \(problems) problem(s)")
        if problems > 0 { throw ExitCode(1) }
    }
}
