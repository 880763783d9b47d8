import Federation
import JSON
import Support

extension ChainPage {
    /// The chain page for `trace`, as HTML. Every string a statement carries reaches the template
    /// as a value for `{{...}}` (escaped); links only from `ExplorerPage.link` (http(s) only).
    static func render(_ trace: ChainTrace, baseURL: String) -> String {
        var context: [String: Any] = [
            "form_sub": trace.subject, "form_anchor": trace.trustAnchor,
            "offered": trace.anchors, "has_offered": !trace.anchors.isEmpty,
            "has_problem": trace.problem != nil, "problem": trace.problem?.message ?? "",
            "has_chains": false, "chains": [[String: Any]](), "has_marks": false,
            "has_problems_list": false, "problems_list": [String](),
        ]
        if let e = trace.exploration {
            context["subject"] = e.subject
            context["anchor"] = e.trustAnchor
            context["has_chains"] = !e.candidates.isEmpty
            context["chain_count"] = e.candidates.count
            context["anchor_note"] = e.anchorKnown ? "The Trust Anchor is hosted here: its keys are known."
                : "The Trust Anchor is another server's: it is trusted with the keys of its own configuration."
            context["problems_list"] = e.problems
            context["has_problems_list"] = !e.problems.isEmpty
            context["chains"] = e.candidates.enumerated().map { index, candidate in
                chainContext(candidate, number: index + 1, chosen: index == e.chosen, now: trace.now, baseURL: baseURL)
            }
            context["has_marks"] = !e.trustMarks.isEmpty
            context["marks"] = e.trustMarks.map { m -> [String: Any] in
                ["type": m.entry.trustMarkType, "included": m.included, "rule": m.rule.map(String.init) ?? "", "reason": m.reason]
            }
        }
        let title = trace.subject.isEmpty ? "Trust chains" : "Trust chains of \(trace.subject)"
        return page.render(title: title, context: context)
    }

    private static func chainContext(_ c: ChainExploration.Candidate, number: Int, chosen: Bool, now: Int64, baseURL: String) -> [String: Any] {
        let path = c.statements.filter(\.statement.isEntityConfiguration).map(\.statement.subject)
        var out: [String: Any] = [
            "number": number, "chosen": chosen, "valid": c.chain != nil,
            "path": path.joined(separator: " → "),
            "has_chain_error": c.error != nil,
            "chain_error": c.error.map { "\($0.code): \($0.message) (\(section(of: $0)))" } ?? "",
            "statements": c.statements.map { statementContext($0, baseURL: baseURL) },
            "constraints": c.constraints.map { v -> [String: Any] in
                ["issuer": v.issuer, "issuer_href": ExplorerPage.entityHref(v.issuer),
                 "checks": v.checks.map { ["name": $0.name, "section": $0.section, "passed": $0.passed, "detail": $0.detail] as [String: Any] }]
            },
            "has_policy": c.policy != nil,
        ]
        if let policy = c.policy { out["policy"] = policyContext(policy) }
        return out
    }

    /// The section a chain's error breaks, in words for the page.
    private static func section(of error: FederationError) -> String {
        let m = error.message
        if case .invalidMetadata = error { return "metadata policy, OpenID Federation 1.0 §6.1.4" }
        if m.contains("constraint") { return "constraints, OpenID Federation 1.0 §6.2" }
        if m.contains("signed") || m.contains("signature") || m.contains("verif") { return "signature, OpenID Federation 1.0 §10.2" }
        if m.contains("expired") || m.contains("exp") || m.contains("iat") { return "validity time, OpenID Federation 1.0 §10.2 and §3" }
        return "trust chain validation, OpenID Federation 1.0 §10.2"
    }

    private static func statementContext(_ s: ChainExploration.Statement, baseURL: String) -> [String: Any] {
        let st = s.statement
        let link = s.endpoint.flatMap { ExplorerPage.link($0, baseURL: baseURL) }
        return [
            "kind": st.isEntityConfiguration ? "Entity configuration" : "Subordinate statement",
            "iss": st.issuer, "sub": st.subject,
            "iss_href": ExplorerPage.entityHref(st.issuer), "sub_href": ExplorerPage.entityHref(st.subject),
            "iat": st.issuedAt, "iat_human": ExplorerPage.humanTime(st.issuedAt),
            "exp": st.expiresAt, "exp_human": ExplorerPage.humanTime(st.expiresAt),
            "sig_ok": s.signature.passed, "sig_detail": s.signature.detail,
            "time_ok": s.time.passed, "time_detail": s.time.detail,
            "failed_check": !s.signature.passed || !s.time.passed,
            "has_endpoint": link != nil, "endpoint": link?.href ?? "", "endpoint_external": link?.external ?? false,
            "header": header(of: st.compact).map(ExplorerPage.pretty) ?? "(the header does not decode)",
            "claims": ExplorerPage.pretty(.object(st.claims)),
            "compact": st.compact,
        ]
    }

    /// The protected header of a compact JWS, decoded for reading (the statement was parsed,
    /// and its header checked, when it was obtained).
    static func header(of compact: String) -> JSONValue? {
        guard let dot = compact.firstIndex(of: "."), let bytes = Base64URL.decode(String(compact[..<dot])) else { return nil }
        return try? JSONValue.parse(bytes)
    }

    private static func policyContext(_ p: MetadataPolicyTrace) -> [String: Any] {
        var failure = ""
        if let f = p.failure {
            var at: [String] = []
            if let level = f.levelEntityID { at.append("in the policy of \(level)") }
            if let type = f.entityType { at.append("for \(type)") }
            if let parameter = f.parameter { at.append("at \(parameter)") }
            let stage: String
            switch f.stage {
            case .parse: stage = "The policy as published is invalid"
            case .merge: stage = "Merging policies failed (a subordinate may only narrow its superiors' policy)"
            case .metadata: stage = "The superior's metadata cannot be applied"
            case .apply: stage = "Applying the merged policy rejected the metadata"
            }
            failure = "\(stage) \(at.joined(separator: " ")): \(f.message) (\(f.code), OpenID Federation 1.0 §\(f.section))."
        }
        return [
            "has_policy_failure": p.failure != nil, "policy_failure": failure,
            "types": p.entityTypes.map { t -> [String: Any] in
                ["type": t.name, "present": t.present, "parameters": t.parameters.map(parameterContext)]
            },
        ]
    }

    private static func parameterContext(_ p: MetadataPolicyTrace.Parameter) -> [String: Any] {
        func show(_ v: JSONValue?) -> String { v.map(ExplorerPage.pretty) ?? "(absent)" }
        return [
            "name": p.name, "changed": p.changed, "failed": p.failed,
            "changed_by": p.changedBy.joined(separator: ", "),
            "leaf": show(p.leafValue),
            "has_superior": p.superiorValue != nil, "superior": show(p.superiorValue),
            "levels": p.levels.map { l -> [String: Any] in
                ["entity": l.entityID, "href": ExplorerPage.entityHref(l.entityID), "operators": ExplorerPage.pretty(.object(l.operators))]
            },
            "has_merged": p.merged != nil, "merged": p.merged.map { ExplorerPage.pretty(.object($0)) } ?? "",
            "has_steps": !p.steps.isEmpty,
            "steps": p.steps.map { s -> [String: Any] in
                ["op": s.operatorName, "value": s.value.map { $0.serialized() } ?? "(absent)", "step_changed": s.changed]
            },
            "final": p.failed ? "(not resolved: fails here)" : show(p.finalValue),
        ]
    }
}
