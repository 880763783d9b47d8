import Federation
import Foundation
import JSON
import Support

/// What the chain page shows (`/explorer/chain?sub=&trust_anchor=`): the form's values, the
/// hosted Trust Anchors it offers, and either the resolver's exploration of every chain from
/// the subject to the anchor or what is wrong with the request. Plain values, no HTTP.
struct ChainTrace: Sendable {
    /// Why there is nothing to show, and the status class of the answer.
    struct Problem: Sendable, Error {
        enum Kind: Sendable { case badRequest, notFound, unprocessable }
        let kind: Kind
        let message: String
    }

    let subject: String
    let trustAnchor: String
    /// Hosted Trust Anchors, offered in the form.
    let anchors: [String]
    let exploration: ChainExploration?
    let problem: Problem?
    /// When the page was built, for the time checks it reports.
    let now: Int64

    /// The longest entity ID the page accepts, like a URL a browser would still send.
    static let maxIdentifierLength = 2048
}

extension Explorer {
    /// Builds the chain page's model. `sub` and `trust_anchor` as typed in the form; with no
    /// subject there is only the form. Without `trust_anchor` the first hosted anchor is used.
    func chainTrace(subject rawSubject: String?, trustAnchor rawAnchor: String?) -> ChainTrace {
        let anchors = host.entities.values.filter(\.isTrustAnchor).map(\.entityID).sorted()
        let subject = (rawSubject ?? "").trimmingCharacters(in: .whitespaces)
        var anchor = (rawAnchor ?? "").trimmingCharacters(in: .whitespaces)
        if anchor.isEmpty { anchor = anchors.first ?? "" }
        func answer(_ exploration: ChainExploration?, _ problem: ChainTrace.Problem?) -> ChainTrace {
            ChainTrace(subject: subject, trustAnchor: anchor, anchors: anchors, exploration: exploration, problem: problem, now: clock.now())
        }
        guard !subject.isEmpty else { return answer(nil, nil) }
        if let why = Self.malformedIdentifier(subject) {
            return answer(nil, .init(kind: .badRequest, message: "The subject is not an entity identifier: \(why)."))
        }
        if anchor.isEmpty { return answer(nil, .init(kind: .badRequest, message: "No Trust Anchor given, and none is hosted here.")) }
        if let why = Self.malformedIdentifier(anchor) {
            return answer(nil, .init(kind: .badRequest, message: "The Trust Anchor is not an entity identifier: \(why)."))
        }
        let exploration: ChainExploration
        do {
            exploration = try host.exploreChains(subject: subject, trustAnchor: anchor)
        } catch {
            return answer(nil, Self.problem(error))
        }
        if exploration.candidates.isEmpty {
            let detail = exploration.problems.isEmpty ? "no authority_hints lead there" : exploration.problems.joined(separator: "; ")
            return answer(exploration, .init(kind: .notFound, message: "No trust chain from \(subject) to \(anchor): \(detail)."))
        }
        if exploration.chosen == nil {
            return answer(exploration, .init(kind: .unprocessable,
                                             message: "No valid trust chain: every chain found fails, see where below."))
        }
        return answer(exploration, nil)
    }

    /// An entity identifier is an http(s) URL with a host and no query or fragment (section 1.2;
    /// plain http is for local federations such as the demo). Nil when acceptable, else why not.
    static func malformedIdentifier(_ id: String) -> String? {
        if id.count > ChainTrace.maxIdentifierLength { return "longer than \(ChainTrace.maxIdentifierLength) characters" }
        if id.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) { return "it contains spaces or control characters" }
        guard let url = URLComponents(string: id), let scheme = url.scheme?.lowercased() else { return "not a URL" }
        guard scheme == "https" || scheme == "http" else { return "only https (or http) URLs identify entities" }
        guard let h = url.host, !h.isEmpty else { return "the URL has no host" }
        if url.query != nil || url.fragment != nil { return "an entity identifier has no query or fragment" }
        return nil
    }

    /// A resolver error in the words of the page, never a 5xx: the request or the federation it
    /// points at is what failed.
    static func problem(_ error: FederationError) -> ChainTrace.Problem {
        switch error {
        case .invalidRequest(let m):
            return .init(kind: .badRequest, message: "Not allowed: \(m).")
        case .invalidTrustAnchor(let m):
            return .init(kind: .badRequest, message: "Not a Trust Anchor: \(m).")
        case .invalidSubject(let m):
            return .init(kind: .notFound, message: "The subject could not be used: \(m).")
        case .temporarilyUnavailable(let m):
            return .init(kind: .notFound, message: "Could not be fetched in time: \(m).")
        default:
            return .init(kind: .notFound, message: "\(error.code): \(error.message).")
        }
    }
}
