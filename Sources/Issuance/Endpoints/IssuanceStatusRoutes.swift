import HTTP

extension IssuanceRoutes {
    func addStatusRoutes(to router: inout Router<String>) {
    }
}
