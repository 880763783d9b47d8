import Mustache

/// The HTML pages every service shows people (the PID Provider's offer pages and mock login, the
/// Wallet Provider's and verifier's pages to come): one layout around a body template, with the
/// service's name in the footer. Templates are Mustache with HTML escaping on `{{name}}` (quotes
/// included), so a persona called `<script>` shows as text; `{{{name}}}` is for markup we built
/// ourselves.
///
/// The layout fits the HTML routes' Content-Security-Policy (`ResponsePolicy.html`): styles
/// inline in one `<style>` element ('unsafe-inline' is allowed for styles), images from the
/// same origin or `data:`, and no script at all, so every page works without JavaScript. The
/// viewport meta tag and a single fluid column keep pages readable on a 390 px phone.
public struct PageLayout: Sendable {
    /// Who shows the page, e.g. "PID Provider": the footer reads "Trustbed test <service>".
    public let service: String

    public init(service: String) { self.service = service }

    /// A page body: a Mustache template, parsed once. Our templates are literals, so a syntax
    /// error is a bug.
    public struct Body: Sendable {
        fileprivate let template: MustacheTemplate

        public init(_ text: String) { template = PageLayout.parse(text) }
    }

    /// The whole document: `title` (escaped) in `<title>` and `<h1>`, the body rendered with
    /// `context` below it.
    public func render(title: String, body: Body, context: [String: Any]) -> String {
        Self.layout.render(["title": title, "service": service, "stylesheet": Self.stylesheet,
                            "content": body.template.render(context)])
    }

    /// One-off form of `render(title:body:context:)`.
    public func render(title: String, body text: String, context: [String: Any]) -> String {
        render(title: title, body: Body(text), context: context)
    }

    private static let layout = parse("""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>{{title}} · Trustbed</title>
        <style>{{{stylesheet}}}</style>
        </head>
        <body>
        <main>
        <h1>{{title}}</h1>
        {{{content}}}
        </main>
        <footer>Trustbed test {{service}}: test data only</footer>
        </body>
        </html>

        """)

    /// Small, legible, phone first: one column at most 40rem wide, large tap targets.
    private static let stylesheet = """
        *,*::before,*::after{box-sizing:border-box}
        body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f23;background:#f6f7f9}
        main{max-width:40rem;margin:0 auto;padding:1rem;background:#fff;min-height:90vh}
        h1{font-size:1.4rem;margin:.5rem 0 1rem}h2{font-size:1.1rem;margin:1.25rem 0 .5rem}
        footer{max-width:40rem;margin:0 auto;padding:.75rem 1rem;font-size:.8rem;color:#57606a}
        fieldset{border:1px solid #d0d7de;border-radius:6px;margin:0 0 1rem;padding:.5rem .75rem}
        legend{font-weight:600;padding:0 .25rem}
        label{display:flex;gap:.5rem;align-items:flex-start;padding:.35rem 0;cursor:pointer}
        label input{margin-top:.3rem;flex:none}
        input[type=text],input[type=password]{width:100%;padding:.5rem;font:inherit;border:1px solid #d0d7de;border-radius:6px}
        button,.button{display:inline-block;padding:.6rem 1.1rem;font:inherit;font-weight:600;color:#fff;background:#0a5dc2;
        border:0;border-radius:6px;text-decoration:none;cursor:pointer}
        .qr{display:block;width:100%;max-width:20rem;height:auto;margin:.5rem auto;image-rendering:pixelated}
        .code{font:700 1.6rem/1.2 ui-monospace,Menlo,Consolas,monospace;letter-spacing:.2em}
        .muted{color:#57606a;font-size:.9rem}
        .error{padding:.5rem .75rem;border-left:4px solid #cf222e;background:#ffebe9}
        dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem .75rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
        code,.wrap{overflow-wrap:anywhere;word-break:break-all}
        ul{padding-left:1.25rem}
        """

    fileprivate static func parse(_ text: String) -> MustacheTemplate {
        do {
            return try MustacheTemplate(string: text)
        } catch {
            preconditionFailure("page template does not parse: \(error)")
        }
    }
}
