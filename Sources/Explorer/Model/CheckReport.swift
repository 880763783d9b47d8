import Federation

/// `trustbed check` as a page: every finding of `EntityChecker`, ok or the problem.
struct CheckReport: Sendable {
    let entityID: String
    let findings: [CheckFinding]
    var problems: Int { findings.filter { !$0.ok }.count }

    static func build(host: FederationHost, entityID: String) -> CheckReport {
        CheckReport(entityID: entityID, findings: host.check(entityID: entityID))
    }
}
