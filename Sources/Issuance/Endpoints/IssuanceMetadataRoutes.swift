import Cryptography
import HTTP
import JSON

extension IssuanceRoutes {
    /// The well-known documents (also reachable in the RFC 8414 insertion form through `Site`)
    /// and the IACA certificate and CRL that mdoc verifiers need. The JSON documents never
    /// change while the provider lives, so they are prepared once.
    func addMetadataRoutes(to router: inout Router<String>) {
        let provider = self.provider
        // §12.2.2: the document is negotiated on `Accept`, so both forms say `Vary: Accept`
        // (RFC 9110 §12.5.5) and a shared cache does not hand the JSON to a wallet that asked
        // for the signed form, or the reverse.
        var unsigned = HTTPResponse.json(.object(provider.credentialIssuerMetadata))
        unsigned.headers.append((name: "Vary", value: "Accept"))
        let issuerJSON = unsigned.applying(.publicRead).prepared()
        router.get("/.well-known/openid-credential-issuer") { _, request, _ in
            // A wallet asking for application/jwt gets the signed form; JSON otherwise.
            guard Self.prefersJWT(request.header("accept")) else { return issuerJSON }
            var signed = HTTPResponse.jwt(try provider.signedCredentialIssuerMetadata(), contentType: "application/jwt")
            signed.headers.append((name: "Vary", value: "Accept"))
            return signed
        }
        let asJSON = HTTPResponse.json(.object(provider.authorizationServerMetadata)).applying(.publicRead).prepared()
        router.get("/.well-known/oauth-authorization-server", memo: true) { _, _, _ in asJSON }
        let vcIssuerJSON = HTTPResponse.json(.object(provider.jwtVCIssuerMetadata)).applying(.publicRead).prepared()
        router.get("/.well-known/jwt-vc-issuer", memo: true) { _, _, _ in vcIssuerJSON }
        let iaca = HTTPResponse(status: .ok, headers: [("Content-Type", "application/x-pem-file")],
                                body: Array(provider.keys.iaca.pem().utf8)).applying(.publicRead).prepared()
        router.get("/iaca.pem", memo: true) { _, _, _ in iaca }
        let crl = HTTPResponse(status: .ok, headers: [("Content-Type", "application/pkix-crl")],
                               body: provider.keys.crl.der).applying(.publicRead).prepared()
        router.get("/iaca.crl", memo: true) { _, _, _ in crl }
    }

    /// True when `application/jwt` is acceptable and JSON is not preferred over it: the first
    /// listed of the two wins when both appear (q-values are rare from wallets; a q=0 refuses).
    static func prefersJWT(_ accept: String?) -> Bool {
        guard let accept else { return false }
        for item in accept.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = parts.first else { continue }
            if parts.dropFirst().contains(where: { $0 == "q=0" || $0 == "q=0.0" || $0 == "q=0.00" || $0 == "q=0.000" }) { continue }
            if type == "application/jwt" { return true }
            if type == "application/json" || type == "*/*" || type == "application/*" { return false }
        }
        return false
    }
}
