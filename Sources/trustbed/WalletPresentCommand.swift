import ArgumentParser
import Federation
import Foundation
import JSON
import Support
import Wallet

/// `trustbed wallet present`: answers an OpenID4VP 1.0 request with credentials of the test
/// wallet file (the `Wallet` library's `WalletPresenter`); this command parses and prints.
struct WalletPresentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "present",
        abstract: "Answer an OpenID4VP 1.0 presentation request (openid4vp:// link) from the test wallet file.",
        discussion: """
        Fetches the signed request object (request_uri) and checks it by its client identifier prefix: x509_hash \
        (SHA-256 of the x5c leaf) and x509_san_dns (the leaf's dNSName), anchored with --verifier-ca when given; \
        openid_federation (the trust_chain header validated to --trust-anchor or the wallet file's trust_anchor, \
        the key from the verifier's resolved openid_credential_verifier jwks). Selects for each DCQL credential \
        query a credential that holds every requested claim (honouring values) and discloses only those; makes \
        the KB-JWT (aud = client_id, nonce, sd_hash, iat) or the mdoc device signature over the OpenID4VP \
        SessionTranscript; posts vp_token and state (direct_post) or their JWE (direct_post.jwt). Prints the \
        verifier's answer; exit status 1 with the server's JSON when it refuses.
        """)

    @Argument(help: "The openid4vp:// link (client_id and request_uri).") var link: String
    @Option(help: "The test wallet file (default: $XDG_DATA_HOME/trustbed/wallet.json).") var wallet: String?
    @Option(name: .customLong("trust-anchor"),
            help: "The Trust Anchor for openid_federation verifiers (default: the wallet file's trust_anchor).")
    var trustAnchor: String?
    @Option(name: .customLong("verifier-ca"),
            help: "Verifier root certificate(s) anchoring the x5c of x509 client ids: a PEM file or an http(s) URL.")
    var verifierCA: String?
    @Flag(help: "Show every step (the request object's checks, what is disclosed, every HTTP exchange); never a private key.")
    var verbose = false

    func run() throws {
        do {
            let file = try TestWalletFile.load(wallet ?? TestWalletFile.defaultPath())
            guard !file.credentials.isEmpty else {
                throw WalletError.usage("\(file.path) holds no credentials (receive some with `trustbed wallet receive <offer> --save \(file.path)`)")
            }
            let http = try WalletHTTP()
            if verbose { http.trace = walletLog }
            var presenter = WalletPresenter(http: http)
            if verbose { presenter.log = walletLog }
            presenter.verifierRoots = try verifierCA.map { try loadTrustAnchors($0, http: http, option: "--verifier-ca") }
            if let anchor = trustAnchor ?? file.trustAnchor {
                presenter.federation = { chain, entityID in
                    do {
                        let resolved = try TrustResolver(source: clientSource(), clock: SystemClock())
                            .validate(given: chain, subject: entityID, trustAnchor: anchor)
                        if verbose {
                            walletLog("  trust_chain: " + resolved.statements.map { "\($0.issuer) → \($0.subject)" }.joined(separator: ", "))
                        }
                        return resolved.resolvedMetadata
                    } catch {
                        throw WalletError.verification("the trust_chain of \(entityID) does not lead to \(anchor): \(error)")
                    }
                }
            }
            let outcome = try presenter.present(link: link, wallet: file)
            var out: [String: JSONValue] = ["status": .int(Int64(outcome.status)), "response": outcome.body]
            if let redirect = outcome.redirectURI { out["redirect_uri"] = .string(redirect) }
            print(JSONValue.object(out).serialized(pretty: true))
        } catch WalletError.server(let step, let status, let body) {
            walletLog("error: \(step): HTTP \(status)")
            print(body)
            throw ExitCode(1)
        } catch {
            walletLog("error: \(error)")
            throw ExitCode(1)
        }
    }
}
