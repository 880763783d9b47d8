import HTTP

extension Explorer {
    func chainRoutes(into router: inout Router<Void>) {}
}
