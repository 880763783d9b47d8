import HTTP

extension IssuanceRoutes {
    func addMetadataRoutes(to router: inout Router<String>) {
    }
}
