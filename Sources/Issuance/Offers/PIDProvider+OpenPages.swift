import Pages

extension PIDProvider {
    /// Why the open offer pages refuse this request, or nil (see `OpenPageAccess`). Nothing is
    /// refused here when the form needs the admin token anyway (a base URL off this machine).
    public func openPageRefusal(_ source: PageRequestSource) -> String? {
        guard !offerFormNeedsAdminToken else { return nil }
        return OpenPageAccess(baseURL: urls.issuer).refusal(source, action: "create offers")
    }
}
