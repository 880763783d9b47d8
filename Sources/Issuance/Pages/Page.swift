import Pages

/// A PID Provider page: a body template in the shared layout (`PageLayout`), signed
/// "Trustbed test PID Provider" in the footer.
struct Page: Sendable {
    static let layout = PageLayout(service: "PID Provider")
    private let body: PageLayout.Body

    init(_ template: String) { body = PageLayout.Body(template) }

    func render(title: String, context: [String: Any]) -> String {
        Self.layout.render(title: title, body: body, context: context)
    }
}
