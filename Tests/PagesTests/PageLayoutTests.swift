import Pages
import XCTest

/// The shared page layout: escaped, script-free, phone-sized, signed by the service.
final class PageLayoutTests: XCTestCase {
    func testLayoutEscapesAndFitsAPhone() {
        let layout = PageLayout(service: "PID Provider")
        let html = layout.render(title: "A <b> & 'c'", body: "<p>{{x}}</p>{{{y}}}", context: ["x": "<i>\"q\"</i>", "y": "<em>ok</em>"])
        XCTAssertTrue(html.contains("<title>A &lt;b&gt; &amp; &#39;c&#39; · Trustbed</title>"))
        XCTAssertTrue(html.contains("<p>&lt;i&gt;&quot;q&quot;&lt;/i&gt;</p><em>ok</em>"))
        XCTAssertTrue(html.contains(#"<meta name="viewport" content="width=device-width, initial-scale=1">"#))
        XCTAssertFalse(html.lowercased().contains("<script"))
        XCTAssertTrue(html.contains("<footer>Trustbed test PID Provider: test data only</footer>"))
    }

    func testServiceNameIsPassedInAndEscaped() {
        let body = PageLayout.Body("<p>{{n}}</p>")
        let html = PageLayout(service: "Wallet <Provider>").render(title: "T", body: body, context: ["n": 1])
        XCTAssertTrue(html.contains("<footer>Trustbed test Wallet &lt;Provider&gt;: test data only</footer>"), html)
        XCTAssertTrue(html.contains("<p>1</p>"))
    }
}
