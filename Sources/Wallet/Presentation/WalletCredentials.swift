import JSON
import SDJWT

/// The wallet file's credentials decoded once (each SD-JWT VC parsed with its disclosures
/// processed, each mdoc's IssuerSigned decoded, each holder key imported), so answering a
/// request selects without decoding a credential and its portrait again: `wallet present` decodes
/// them once per run, the verifier benchmark once per load test.
public struct WalletCredentials {
    struct SDJWTEntry {
        let credential: SDJWT
        let vct: String
        /// Every disclosure applied: what the holder could show, to match `claims` and `values`.
        let claims: [String: JSONValue]
        let disclosed: [DisclosedClaim]
        let key: HolderKey
    }

    public let path: String
    let sdJWTs: [SDJWTEntry]
    let mdocs: [StoredMDoc]

    public init(_ wallet: TestWalletFile) throws {
        path = wallet.path
        var sdJWTs: [SDJWTEntry] = []
        var mdocs: [StoredMDoc] = []
        for entry in wallet.credentials {
            switch entry["format"]?.stringValue {
            case "dc+sd-jwt":
                guard let text = entry["credential"]?.stringValue, let jwk = entry["holder_key"]?.objectValue else {
                    throw WalletError.usage("\(wallet.path): a dc+sd-jwt credential without its credential or holder_key")
                }
                let credential = try SDJWT.parse(text)
                let payload = try credential.parsedIssuerJWT().payload()
                sdJWTs.append(SDJWTEntry(credential: credential, vct: payload["vct"]?.stringValue ?? "", claims: try credential.holderClaims(),
                                         disclosed: try credential.disclosedClaims(), key: try HolderKey(privateJWK: jwk)))
            case "mso_mdoc":
                var one = TestWalletFile(path: wallet.path)
                one.credentials = [entry]
                mdocs.append(try StoredMDoc.first(in: one))
            default:
                continue
            }
        }
        self.sdJWTs = sdJWTs
        self.mdocs = mdocs
    }
}

extension WalletCredentials.SDJWTEntry {
    /// RFC 9901 §5.2: the disclosures whose path `keep` accepts and every one on the way to them
    /// (as `SDJWT.presentation(disclosing:)`, from the disclosures processed once).
    func presentation(keeping keep: (JSONPath) -> Bool) -> (SDJWT, [String]) {
        let kept = disclosed.filter { keep($0.path) }.map(\.path.components)
        let selected = disclosed.filter { claim in
            kept.contains { claim.path.components.count <= $0.count && zip(claim.path.components, $0).allSatisfy { $0 == $1 } }
        }
        return (SDJWT(issuerJWT: credential.issuerJWT, disclosures: selected.map(\.disclosure), keyBindingJWT: nil),
                selected.map { $0.path.description })
    }
}
