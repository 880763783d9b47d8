import HTTP

extension IssuanceRoutes {
    func addCredentialRoutes(to router: inout Router<String>) {
    }
}
