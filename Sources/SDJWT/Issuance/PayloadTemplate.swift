import JSON

/// Claims and a `DisclosurePlan` compiled once into what every SD-JWT made from them shares:
/// the JSON text of each visible value and of each disclosure's `"name",value` tail, the
/// members in the serializer's order and where each `_sd` array goes. An issuance then only
/// draws salts and decoys, encodes and hashes the disclosures, sorts the digests and writes
/// the payload around them (`render`); the bytes are those that applying the plan to a
/// claims dictionary and serializing the result gave (sorted keys, the same escapes), so an
/// issuer that signs many credentials from the same claims (a PID per persona and day) does
/// not walk, copy and serialize the claim values for each one (measured: see
/// docs/performance.md).
public struct SDJWTPayloadTemplate: Sendable {
    indirect enum Node: Sendable {
        /// A value with nothing disclosed inside: its JSON text.
        case text([UInt8])
        /// An object: its visible and its disclosable members, each in the serializer's order;
        /// `sdSlot` is how many visible members come before `_sd` (when any is disclosable).
        case object(visible: [Member], disclosed: [Member], sdSlot: Int)
        case array([Element])
    }

    struct Member: Sendable {
        let name: String
        let disclosable: Bool
        /// `"name":` for a visible member, `"name",` (a disclosure's middle) for a disclosable one.
        let key: [UInt8]
        let value: Node
    }

    struct Element: Sendable {
        let disclosable: Bool
        let value: Node
    }

    /// The top-level object.
    let root: Node
    /// Every top-level claim name and every name the top-level plan mentions: added claims
    /// must be none of these (`SDJWTIssuer.issueCompact(template:adding:)`).
    let claimNames: Set<String>

    /// Checks the plan against the claims as applying it did: always-visible claims stay
    /// visible (SD-JWT VC §3.2.2.2), `_sd` and `...` are no claim names (RFC 9901 §4.2.1), and
    /// where the plan expects an object or an array the claims have one.
    public init(claims: [String: JSONValue], plan: DisclosurePlan) throws(SDJWTError) {
        if case .object(let rules) = plan {
            for name in DisclosurePlan.alwaysVisibleClaims where rules[name]?.disclosable == true {
                throw .invalidPlan("\"\(name)\" must stay visible")
            }
        }
        for name in DisclosurePlan.reservedNames where claims[name] != nil {
            throw .invalidPlan("claim name \"\(name)\" is reserved")
        }
        // The payload's own `_sd_alg` replaces a claim of that name, as it always did.
        var claims = claims
        claims["_sd_alg"] = nil
        var names = Set(claims.keys)
        if case .object(let rules) = plan { names.formUnion(rules.keys) }
        claimNames = names
        // The top level stays an object node even with nothing to disclose, so the added
        // members and `_sd_alg` are merged into it.
        if case .plain = plan {
            root = try Self.compile(.object([:]), .object(claims), path: "", collapsing: false)
        } else {
            root = try Self.compile(plan, .object(claims), path: "", collapsing: false)
        }
    }

    /// The node for `value` under `plan`; a part with nothing disclosable inside becomes its
    /// JSON text, unless `collapsing` is false (the top level).
    private static func compile(_ plan: DisclosurePlan, _ value: JSONValue, path: String,
                                collapsing: Bool = true) throws(SDJWTError) -> Node {
        switch plan {
        case .plain:
            return .text(value.bytes)
        case .object(let rules):
            guard let object = value.objectValue else { throw .invalidPlan("\(path.isEmpty ? "claims" : path) is not an object") }
            var members: [Member] = []
            members.reserveCapacity(object.count)
            var disclosures = false
            for (name, member) in object.sorted(by: { $0.key < $1.key }) {
                let rule = rules[name]
                if rule != nil, DisclosurePlan.isReserved(name) { throw .invalidPlan("claim name \"\(name)\" is reserved") }
                let content = rule?.content ?? .plain
                let inner = try compile(content, member, path: path.isEmpty ? name : "\(path).\(name)")
                let disclosable = rule?.disclosable ?? false
                var key: [UInt8] = []
                JSONValue.encodeString(name, appendingTo: &key)
                key.append(disclosable ? UInt8(ascii: ",") : UInt8(ascii: ":"))
                members.append(Member(name: name, disclosable: disclosable, key: key, value: inner))
                disclosures = disclosures || disclosable
            }
            // Rules for names the object lacks are optional claims. The object's own `_sd` would
            // clash with the digests' (applying the plan replaced it).
            if disclosures, object["_sd"] != nil { throw .invalidPlan("claim name \"_sd\" is reserved") }
            let visible = members.filter { !$0.disclosable }
            if collapsing, !disclosures, visible.allSatisfy({ Self.isText($0.value) }) { return .text(value.bytes) }
            return .object(visible: visible, disclosed: members.filter(\.disclosable), sdSlot: visible.filter { $0.name < "_sd" }.count)
        case .array(let rule):
            guard let elements = value.arrayValue else { throw .invalidPlan("\(path) is not an array") }
            var out: [Element] = []
            out.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                out.append(Element(disclosable: rule.disclosable, value: try compile(rule.content, element, path: "\(path)[\(index)]")))
            }
            if !rule.disclosable, out.allSatisfy({ Self.isText($0.value) }) { return .text(value.bytes) }
            return .array(out)
        }
    }

    private static func isText(_ node: Node) -> Bool {
        if case .text = node { return true }
        return false
    }
}

/// A visible top-level member given per issuance (`SDJWTIssuer.issueCompact(template:adding:)`):
/// its name and its value's JSON text.
struct AddedMember {
    let name: String
    let text: [UInt8]
}

extension SDJWTPayloadTemplate {
    /// The payload's JSON: the compiled claims with a disclosure made in `writer` for every
    /// disclosable part (inner parts first, so an outer disclosure carries inner digests),
    /// `decoys` decoy digests in every `_sd` array, and `added` (sorted by name) merged in.
    func render(adding added: [AddedMember], decoys: Int, writer: inout DisclosureWriter) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4_096)
        Self.write(root, added: added, decoys: decoys, writer: &writer, into: &out)
        return out
    }

    private static func write(_ node: Node, added: [AddedMember] = [], decoys: Int, writer: inout DisclosureWriter,
                              into out: inout [UInt8]) {
        switch node {
        case .text(let text):
            out += text
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                guard element.disclosable else {
                    write(element.value, decoys: decoys, writer: &writer, into: &out)
                    continue
                }
                // RFC 9901 §4.2.4.2: the element becomes {"...": digest}.
                out += Self.ellipsisKey
                disclose(element.value, key: [], decoys: decoys, writer: &writer, digestsInto: &out)
                out += Self.ellipsisEnd
            }
            out.append(UInt8(ascii: "]"))
        case .object(let visible, let disclosed, let sdSlot):
            // The digests, each `"<base64url>"`, back to back in one buffer.
            var digests: [UInt8] = []
            if !disclosed.isEmpty {
                digests.reserveCapacity((disclosed.count + decoys) * (Self.digestLength + 2))
                for member in disclosed {
                    disclose(member.value, key: member.key, decoys: decoys, writer: &writer, digestsInto: &digests)
                }
                for _ in 0..<decoys { writer.decoyDigest(into: &digests) }
            }
            out.append(UInt8(ascii: "{"))
            var written = 0
            var nextAdded = 0
            // Visible members, `_sd` and the added members in the serializer's (sorted) order.
            func member(_ write: () -> Void) {
                if written > 0 { out.append(UInt8(ascii: ",")) }
                written += 1
                write()
            }
            func addedBefore(_ name: String?) {
                while nextAdded < added.count, name.map({ added[nextAdded].name < $0 }) ?? true {
                    let next = added[nextAdded]
                    member {
                        JSONValue.encodeString(next.name, appendingTo: &out)
                        out.append(UInt8(ascii: ":"))
                        out += next.text
                    }
                    nextAdded += 1
                }
            }
            for i in 0...visible.count {
                if i == sdSlot, !disclosed.isEmpty {
                    addedBefore("_sd")
                    member { writeSortedDigests(digests, into: &out) }
                }
                guard i < visible.count else { break }
                addedBefore(visible[i].name)
                member {
                    out += visible[i].key
                    write(visible[i].value, decoys: decoys, writer: &writer, into: &out)
                }
            }
            addedBefore(nil)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Base64url of a SHA-256 digest: 43 characters.
    static let digestLength = 43
    private static let ellipsisKey = Array(#"{"...":"#.utf8)
    private static let ellipsisEnd = [UInt8(ascii: "}")]
    private static let sdKey = Array(#""_sd":["#.utf8)

    /// `"_sd":[...]` with the quoted digests of `digests` sorted, so the order reveals nothing
    /// about the claims' original order (§4.2.4.1); base64url is ASCII, so byte order is the
    /// order of the strings.
    private static func writeSortedDigests(_ digests: [UInt8], into out: inout [UInt8]) {
        let size = digestLength + 2
        let count = digests.count / size
        out += sdKey
        digests.withUnsafeBufferPointer { all in
            func digest(_ i: Int) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: all[i * size..<(i + 1) * size]) }
            let order = (0..<count).sorted { digest($0).lexicographicallyPrecedes(digest($1)) }
            for (n, i) in order.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: digest(i))
            }
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Makes the disclosure of a member (`key` = `"name",`) or an element (`key` empty) and
    /// appends its quoted digest to `digests`.
    private static func disclose(_ value: Node, key: [UInt8], decoys: Int, writer: inout DisclosureWriter,
                                 digestsInto digests: inout [UInt8]) {
        if case .text(let text) = value {
            writer.disclose(key: key, value: text, digestInto: &digests)
            return
        }
        var inner: [UInt8] = []
        write(value, decoys: decoys, writer: &writer, into: &inner)
        writer.disclose(key: key, value: inner, digestInto: &digests)
    }
}
