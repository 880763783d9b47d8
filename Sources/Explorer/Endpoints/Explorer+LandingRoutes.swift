import HTTP

extension Explorer {
    func landingRoutes(into router: inout Router<Void>) {}
}
