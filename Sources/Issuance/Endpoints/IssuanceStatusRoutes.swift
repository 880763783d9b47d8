import HTTP

extension IssuanceRoutes {
    /// Token Status Lists (Token Status List §8.1) at the `uri` the credentials name. Built at
    /// every request and never memoized, so an admin's status change shows at once; public, so
    /// any verifier (a browser-based one too) may fetch it. Sent gzip-encoded to a client that
    /// accepts it (`Content-Encoding: gzip`, `Vary: Accept-Encoding`).
    func addStatusRoutes(to router: inout Router<String>) {
        let provider = self.provider
        router.get("/status/{n}", memo: false) { _, request, parameters in
            let text = parameters.require("n")
            guard text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(text),
                  let token = try provider.statusListToken(number: number) else {
                throw IssuanceError(.notFound, "no such status list")
            }
            // gzip when the client accepts it: a status list token is mostly base64url text.
            return HTTPResponse.jwt(token, contentType: "application/statuslist+jwt")
                .negotiatingGzip(acceptEncoding: request.header("accept-encoding"))
        }
    }
}
