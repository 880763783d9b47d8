import HTTP
import JSON

extension VerifierRoutes {
    /// Apple's Verify with Wallet (issue 22, item 5): the merchant's encryption certificate an
    /// app (or `trustbed wallet apple-envelope`) seals to, and the endpoint a merchant server
    /// posts the app's envelope to.
    static func addAppleRoutes(_ apple: AppleIdentityService, to router: inout Router<String>) {
        let certificate = HTTPResponse(status: .ok, headers: [("Content-Type", "application/x-pem-file")],
                                       body: Array(apple.keys.certificate.pem().utf8)).applying(.publicRead).prepared()
        router.get("/apple/encryption.pem", memo: true) { _, _, _ in certificate }
        // 200 with the report for every envelope, verified or refused; 400 for a body that is
        // not {"envelope", "nonce"} in base64.
        router.post("/apple/identity", policy: .perClient) { _, request, _ in
            .json(try apple.verify(try request.jsonBody()).json)
        }
    }
}
