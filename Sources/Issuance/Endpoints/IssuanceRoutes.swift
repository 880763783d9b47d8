import HTTP

/// The PID Provider's routes, mounted at its entity ID beside the federation's. Each concern
/// adds its own routes (`Issuance*Routes.swift`); handlers parse, call the provider, render.
public struct IssuanceRoutes: Sendable {
    public let provider: PIDProvider

    public init(provider: PIDProvider) { self.provider = provider }

    public func router() -> Router<String> {
        var router = Router<String>()
        addMetadataRoutes(to: &router)
        addOAuthRoutes(to: &router)
        addCredentialRoutes(to: &router)
        addStatusRoutes(to: &router)
        addOfferRoutes(to: &router)
        return router
    }
}
