@testable import Explorer
import Federation
import XCTest

/// The landing page's model: counts, Trust Anchors, one level of the tree at a time with
/// pagination, and the badges of each node.
final class FederationTreeTests: XCTestCase {
    typealias F = LandingFixture

    func testCountsAndTrustAnchorsMatchTheIndex() throws {
        let tree = FederationTree(host: try F.federation(leaves: 3))
        // ta; int-a and int-b have subordinates; solo and three leaves are leaves.
        XCTAssertEqual(tree.counts, FederationCounts(entities: 7, trustAnchors: 1, intermediates: 2, leaves: 4))
        XCTAssertEqual(tree.trustAnchorIDs, [F.id("ta")])
    }

    func testLevelListsIntermediatesFirstThenLeavesWithBadges() throws {
        let tree = FederationTree(host: try F.federation())
        let level = try XCTUnwrap(tree.level(F.id("ta"), offset: 0))
        XCTAssertEqual(level.children.map(\.entityID), [F.id("int-a"), F.id("int-b"), "https://other.example/rp"])
        XCTAssertEqual(level.total, 3)
        XCTAssertNil(level.nextOffset)
        XCTAssertEqual(level.path, [])
        let intA = level.children[0]
        XCTAssertTrue(intA.isSuperior)
        XCTAssertEqual(intA.subordinateCount, 3)
        XCTAssertEqual(intA.organizationName, "Alpha Intermediate")
        // The remote subordinate: its ID as name, the entity types its superior declares.
        let remote = level.children[2]
        XCTAssertFalse(remote.hosted)
        XCTAssertEqual(remote.name, "https://other.example/rp")
        XCTAssertEqual(remote.entityTypes, ["openid_relying_party"])

        let leaves = try XCTUnwrap(tree.level(F.id("int-a"), offset: 0))
        XCTAssertEqual(leaves.path.map(\.name), ["ta"])
        let marked = try XCTUnwrap(leaves.children.first { $0.name == "leaf-001" })
        XCTAssertEqual(marked.trustMarkTypes, ["https://marks.example/tm/certified"])
        // Entity types are the keys of the published metadata (federation_entity is added for
        // the federation endpoints every hosted entity serves).
        XCTAssertEqual(marked.entityTypes, ["federation_entity", "openid_relying_party"])
        XCTAssertEqual(leaves.children.first { $0.name == "leaf-000" }?.trustMarkTypes, [])
    }

    func testPagesOfAHundredBeyondTheFirst() throws {
        let tree = FederationTree(host: try F.federation(leaves: 250))
        let first = try XCTUnwrap(tree.level(F.id("int-a"), offset: 0))
        XCTAssertEqual(first.children.count, 100)
        XCTAssertEqual(first.total, 250)
        XCTAssertEqual(first.nextOffset, 100)
        XCTAssertNil(first.previousOffset)
        let last = try XCTUnwrap(tree.level(F.id("int-a"), offset: 200))
        XCTAssertEqual(last.children.count, 50)
        XCTAssertNil(last.nextOffset)
        XCTAssertEqual(last.previousOffset, 100)
        let all = try (0...2).flatMap { try XCTUnwrap(tree.level(F.id("int-a"), offset: $0 * 100)).children.map(\.name) }
        XCTAssertEqual(all, (0..<250).map { String(format: "leaf-%03d", $0) })
        // Past the end: an empty page that still knows the total.
        let past = try XCTUnwrap(tree.level(F.id("int-a"), offset: 1000))
        XCTAssertEqual(past.children.count, 0)
        XCTAssertEqual(past.total, 250)
    }

    func testLeafLevelIsEmptyAndUnknownEntityHasNone() throws {
        let tree = FederationTree(host: try F.federation())
        let leaf = try XCTUnwrap(tree.level(F.id("solo"), offset: 0))
        XCTAssertEqual(leaf.total, 0)
        XCTAssertEqual(leaf.path.map(\.name), ["ta", "int-b"])
        XCTAssertNil(tree.level("https://nowhere.example/x", offset: 0))
    }

    func testShortTrustMarkType() {
        XCTAssertEqual(TreeNodeView.shortTrustMarkType("https://trustbed.example/trust-marks/pid-provider"), "pid-provider")
        XCTAssertEqual(TreeNodeView.shortTrustMarkType("https://trustbed.example/trust-marks/x/"), "x")
        XCTAssertEqual(TreeNodeView.shortTrustMarkType("urn:mark"), "urn:mark")
        XCTAssertEqual(TreeNodeView.shortTrustMarkType("https://t.example/" + String(repeating: "a", count: 40)).count, 32)
    }
}

/// Search by name, entity ID or organization name.
final class EntitySearchTests: XCTestCase {
    typealias F = LandingFixture

    func testFindsByNameIDAndOrganizationIgnoringCase() throws {
        let search = EntitySearch(tree: FederationTree(host: try F.federation(leaves: 3)))
        XCTAssertEqual(search.search("LEAF-00", offset: 0).matches.map(\.name), ["leaf-000", "leaf-001", "leaf-002"])
        XCTAssertEqual(search.search("fed.example/int-", offset: 0).matches.map(\.name), ["int-a", "int-b"])
        XCTAssertEqual(search.search("alpha interm", offset: 0).matches.map(\.name), ["int-a"])
        XCTAssertEqual(search.search("<SCRIPT>", offset: 0).matches.map(\.name), ["leaf-002"])
        // Remote subordinates are found by their entity ID.
        XCTAssertEqual(search.search("other.example", offset: 0).matches.map(\.entityID), ["https://other.example/rp"])
        XCTAssertEqual(search.search("  ", offset: 0).total, 0)
        XCTAssertEqual(search.search("no such thing", offset: 0).total, 0)
        // The client name is not an organization name: not searched.
        XCTAssertEqual(search.search("RP 1", offset: 0).total, 0)
    }

    func testNoMatchSpansTwoFields() throws {
        let search = EntitySearch(tree: FederationTree(host: try F.federation(leaves: 0)))
        // "ta" + "https://..." joined would read "tahttps"; the separator prevents that.
        XCTAssertEqual(search.search("tahttps", offset: 0).total, 0)
        XCTAssertEqual(search.search("ta\u{0}https", offset: 0).total, 0)
    }

    func testResultsArePaged() throws {
        let search = EntitySearch(tree: FederationTree(host: try F.federation(leaves: 250)))
        let first = search.search("leaf", offset: 0)
        XCTAssertEqual(first.total, 250)
        XCTAssertEqual(first.matches.count, 100)
        XCTAssertEqual(first.nextOffset, 100)
        let third = search.search("leaf", offset: 200)
        XCTAssertEqual(third.matches.map(\.name).first, "leaf-200")
        XCTAssertEqual(third.matches.count, 50)
        XCTAssertNil(third.nextOffset)
    }

    func testByteSearch() {
        func has(_ h: String, _ n: String) -> Bool {
            Array(h.utf8).withUnsafeBytes { hb in Array(n.utf8).withUnsafeBytes { EntitySearch.contains(hb, $0) } }
        }
        XCTAssertTrue(has("abcabd", "abd"))
        XCTAssertTrue(has("abd", "abd"))
        XCTAssertFalse(has("ab", "abd"))
        XCTAssertFalse(has("abcab", "abd"))
        XCTAssertFalse(has("", "a"))
    }
}

/// Which answer `/` gives: HTML only when `text/html` comes before (or instead of) JSON.
final class AcceptNegotiationTests: XCTestCase {
    func testBrowsersGetHTMLProgramsGetJSON() {
        let chrome = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
        XCTAssertTrue(Explorer.prefersHTML(accept: chrome))
        XCTAssertTrue(Explorer.prefersHTML(accept: "text/html"))
        XCTAssertTrue(Explorer.prefersHTML(accept: "TEXT/HTML ; q=0.5"))
        XCTAssertTrue(Explorer.prefersHTML(accept: "text/html, application/json"))
        XCTAssertTrue(Explorer.prefersHTML(accept: "application/json;q=0.5, text/html"))
        XCTAssertFalse(Explorer.prefersHTML(accept: nil))
        XCTAssertFalse(Explorer.prefersHTML(accept: "*/*"))
        XCTAssertFalse(Explorer.prefersHTML(accept: "application/json"))
        XCTAssertFalse(Explorer.prefersHTML(accept: "application/json, text/html"))
        XCTAssertFalse(Explorer.prefersHTML(accept: "text/html;q=0, */*"))
        XCTAssertFalse(Explorer.prefersHTML(accept: "text/html;q=abc"))
        XCTAssertFalse(Explorer.prefersHTML(accept: "text/html;q=0.4, application/json;q=0.9"))
        XCTAssertFalse(Explorer.prefersHTML(accept: ""))
    }
}

/// The pages escape every value and give each node only its own badges.
final class LandingPageRenderTests: XCTestCase {
    typealias F = LandingFixture

    func testValuesAreEscapedAndBadgesBelongToTheirNode() throws {
        let tree = FederationTree(host: try F.federation(leaves: 3))
        let landing = LandingPage.render(tree: tree)
        XCTAssertTrue(landing.contains(#"<img class="picture" src="/explorer/graph.svg""#))
        XCTAssertTrue(landing.contains("<dt>Entities</dt><dd>7</dd>"))
        // One Trust Anchor badge: the anchor's own, not inherited by the subordinates listed in it.
        XCTAssertEqual(landing.components(separatedBy: "badge ta").count - 1, 1)
        XCTAssertEqual(landing.components(separatedBy: "Demo Anchor").count - 1, 1)

        let page = TreePage.render(try XCTUnwrap(tree.level(F.id("int-a"), offset: 0)))
        XCTAssertFalse(page.contains("<script>alert(1)"))
        XCTAssertTrue(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        XCTAssertTrue(page.contains(#"href="/explorer/tree?id=https://fed.example/ta""#))

        let results = TreePage.render(EntitySearch(tree: tree).search("\"><b>", offset: 0))
        XCTAssertFalse(results.contains("\"><b>"))
        XCTAssertTrue(results.contains("&quot;&gt;&lt;b&gt;"))
    }
}
