import HTTP

extension Explorer {
    func entityRoutes(into router: inout Router<Void>) {}
}
