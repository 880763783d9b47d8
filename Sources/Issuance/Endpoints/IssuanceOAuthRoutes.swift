import HTTP

extension IssuanceRoutes {
    func addOAuthRoutes(to router: inout Router<String>) {
    }
}
