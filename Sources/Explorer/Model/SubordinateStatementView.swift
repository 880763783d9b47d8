import Federation
import JOSE
import JSON
import Support

/// A subordinate statement (section 3: `iss` a superior, `sub` its subordinate) decoded for the
/// statement page: what the superior says about the subject — the keys it vouches for, its
/// metadata policy, metadata and constraints — and whether it is signed by the superior.
struct SubordinateStatementView: Sendable {
    let issuer: String
    let subject: String
    let jwt: DecodedJWT
    let signature: SignatureVerdict
    let keys: [KeyRow]
    let metadataPolicy: JSONValue?
    let metadataPolicyCrit: [String]
    let metadata: JSONValue?
    let constraints: JSONValue?

    static func build(host: FederationHost, issuer: String, subject: String, deadline: Deadline) throws(ExplorerFailure) -> SubordinateStatementView {
        let hosted = host.entity(issuer) != nil
        let superior: EntityStatement
        do { superior = try host.sourcedEntityConfiguration(of: issuer, deadline: deadline) } catch {
            throw .fetching("the entity configuration of \(issuer)", error, hosted: hosted)
        }
        guard issuer != subject else {
            throw .badRequest("iss and sub are the same entity: its entity configuration is on its entity page, not a subordinate statement")
        }
        let statement: EntityStatement
        do { statement = try host.sourcedSubordinateStatement(superior: superior, subject: subject, deadline: deadline) } catch {
            throw .fetching("the subordinate statement of \(issuer) about \(subject)", error, hosted: hosted)
        }
        let endpoint = superior.metadata?["federation_entity"]?[FederationEndpoint.fetch.metadataParameter]?.stringValue
            .map { URLEncoding.appendingQuery([("sub", subject)], to: $0) }
        guard let jwt = DecodedJWT(statement.compact, servedBy: endpoint) else {
            throw ExplorerFailure(status: 422, title: "Statement refused", message: "the statement of \(issuer) about \(subject) does not decode")
        }
        var signature = SignatureVerdict.check(statement, with: superior.jwks, whose: "the jwks of \(issuer)'s entity configuration")
        if statement.issuer != issuer || statement.subject != subject {
            signature = SignatureVerdict(verifies: false, keyID: statement.keyID,
                                         detail: "names \(statement.issuer) → \(statement.subject), not \(issuer) → \(subject); " + signature.detail)
        }
        return SubordinateStatementView(
            issuer: issuer, subject: subject, jwt: jwt, signature: signature, keys: statement.jwks.keys.map(KeyRow.init),
            metadataPolicy: statement.metadataPolicy.map(JSONValue.object), metadataPolicyCrit: statement.metadataPolicyCrit,
            metadata: statement.claims["metadata"], constraints: statement.constraints)
    }
}
