import HTTP

extension VerifierRoutes {
    func addPageRoutes(to router: inout Router<String>) {}
}
