import HTTP

extension IssuanceRoutes {
    func addOfferRoutes(to router: inout Router<String>) {
    }
}
