/// Which parts of a claims object an issuer makes selectively disclosable. Members and elements
/// the plan does not mention stay visible. A rule's `content` plan is applied to the value first,
/// so a disclosable `address` can itself hide `street_address` (recursive disclosures,
/// RFC 9901 §6.3):
///
/// ```swift
/// let plan: DisclosurePlan = .object([
///     "given_name": .disclosable,
///     "address": .disclosable(.object(["street_address": .disclosable, "locality": .disclosable])),
///     "nationalities": .visible(.array(.disclosable)),   // each element on its own
/// ])
/// ```
public indirect enum DisclosurePlan: Sendable, Equatable {
    /// The value stays as it is.
    case plain
    /// An object: a rule per member name.
    case object([String: Rule])
    /// An array: one rule applied to every element.
    case array(Rule)

    public struct Rule: Sendable, Equatable {
        /// Whether the member (or element) itself is replaced by a digest.
        public var disclosable: Bool
        /// The plan for the member's value, applied before it is hidden.
        public var content: DisclosurePlan

        public init(disclosable: Bool, content: DisclosurePlan = .plain) {
            self.disclosable = disclosable
            self.content = content
        }

        public static let disclosable = Rule(disclosable: true)
        public static func disclosable(_ content: DisclosurePlan) -> Rule { Rule(disclosable: true, content: content) }
        public static func visible(_ content: DisclosurePlan) -> Rule { Rule(disclosable: false, content: content) }
    }

    /// A flat plan making each named top-level claim disclosable.
    public static func disclosing(_ names: [String]) -> DisclosurePlan {
        .object(Dictionary(uniqueKeysWithValues: names.map { ($0, Rule.disclosable) }))
    }
}

extension DisclosurePlan {
    /// Top-level claims that SD-JWT VC §3.2.2.2 says MUST NOT be selectively disclosable, plus
    /// `iat`, which we keep visible so a verifier can always judge freshness, and `_sd_alg`,
    /// which RFC 9901 §4.1.1 places in the payload itself.
    public static let alwaysVisibleClaims: Set<String> = [
        "iss", "nbf", "exp", "iat", "cnf", "vct", "vct#integrity", "status", "_sd_alg",
    ]

    /// Claim names RFC 9901 §4.2.1 reserves for the format itself.
    static let reservedNames: Set<String> = ["_sd", "..."]

    /// `reservedNames.contains(name)` by two comparisons, without hashing the name.
    static func isReserved(_ name: String) -> Bool { name == "_sd" || name == "..." }
}
