@testable import Explorer
import Federation
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// The picture: every text XML-escaped (and characters XML forbids replaced), leaves grouped at
/// scale, the outline bounded.
final class GraphSVGTests: XCTestCase {
    typealias F = LandingFixture

    func testEscapesMarkupAndForbiddenCharacters() {
        XCTAssertEqual(GraphSVG.xmlEscaped(#"<script>alert("x" & 'y')</script>"#),
                       "&lt;script&gt;alert(&quot;x&quot; &amp; &apos;y&apos;)&lt;/script&gt;")
        XCTAssertEqual(GraphSVG.xmlEscaped("a\u{1}b\u{FFFF}c\td\ne"), "a\u{FFFD}b\u{FFFD}c d e")
        XCTAssertEqual(GraphSVG.xmlEscaped("plain ✓"), "plain ✓")
    }

    func testSmallFederationDrawsEveryEntityAndParsesAsXML() throws {
        let svg = GraphSVG.render(FederationGraph(tree: FederationTree(host: try F.federation(leaves: 3))))
        XCTAssertFalse(svg.contains("<script>"))
        XCTAssertTrue(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        XCTAssertTrue(svg.contains("✓ certified"))
        try assertParses(svg)
        let graph = FederationGraph(tree: FederationTree(host: try F.federation(leaves: 3)))
        // ta, int-a + 3 leaves, int-b + solo, the remote subordinate.
        XCTAssertEqual(graph.rows.count, 8)
        XCTAssertEqual(graph.rows.map(\.depth), [0, 1, 2, 2, 2, 1, 2, 1])
    }

    func testLeavesAreGroupedAtScale() throws {
        let graph = FederationGraph(tree: FederationTree(host: try F.federation(leaves: 13)))
        let groups = graph.rows.compactMap { row -> (String, Int, Int)? in
            if case .leaves(let s, let n, let marked) = row.box { return (s, n, marked) } else { return nil }
        }
        XCTAssertEqual(groups.count, 1)
        XCTAssertEqual(groups.first?.0, F.id("int-a"))
        XCTAssertEqual(groups.first?.1, 13)
        XCTAssertEqual(groups.first?.2, 1)
        let svg = GraphSVG.render(graph)
        XCTAssertTrue(svg.contains("13 leaves"))
        XCTAssertFalse(svg.contains("leaf-012"))
        try assertParses(svg)
        // Twelve stay boxes of their own.
        let twelve = FederationGraph(tree: FederationTree(host: try F.federation(leaves: 12)))
        XCTAssertFalse(twelve.rows.contains { if case .leaves = $0.box { true } else { false } })
    }

    private func assertParses(_ svg: String, file: StaticString = #filePath, line: UInt = #line) throws {
        #if canImport(FoundationXML)
        let parser = XMLParser(data: Data(svg.utf8))
        XCTAssertTrue(parser.parse(), "SVG does not parse: \(String(describing: parser.parserError))", file: file, line: line)
        #endif
    }
}
