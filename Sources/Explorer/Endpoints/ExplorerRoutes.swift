import HTTP

extension Explorer {
    /// Every explorer route, mounted on the server's root router (paths under `/explorer/`, a
    /// name no entity file may take, and the HTML answer of `/` for browsers). Each page adds
    /// its routes in its own `Endpoints/` file.
    public func routes(into router: inout Router<Void>) {
        landingRoutes(into: &router)
        entityRoutes(into: &router)
        chainRoutes(into: &router)
    }
}
