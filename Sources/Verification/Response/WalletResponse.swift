import JOSE
import JSON
import Support

/// The authorization response as posted to the `response_uri` (OpenID4VP 1.0 §8.2, §8.3),
/// decoded once: `vp_token` (an object of credential query ids to arrays of presentations,
/// §8.1), `state`, or the wallet's `error` (§8.5). With `direct_post.jwt` the form carries a
/// single `response`, a JWE encrypted to the verifier's key, whose plaintext is the same
/// parameters as a JSON object.
public struct WalletResponse: Sendable {
    public var state: String?
    public var vpToken: [String: [JSONValue]]?
    public var error: String?
    public var errorDescription: String?
    /// Whether it arrived encrypted (`direct_post.jwt`).
    public var encrypted: Bool
    /// `enc` of the JWE, for the report.
    public var encryption: String?
}

extension Verifier {
    /// Decodes the posted form. Refusals here carry no state the verifier could record against
    /// (a JWE that does not decrypt, a form that repeats a parameter), so they are 400 only.
    public func decodeResponse(form: [(name: String, value: String)]) throws(VerificationError) -> WalletResponse {
        var parameters: [String: String] = [:]
        for (name, value) in form {
            guard parameters.updateValue(value, forKey: name) == nil else { throw .invalidRequest("\(name) is repeated") }
        }
        if let jwe = parameters["response"] {
            guard parameters.count == 1 else {
                throw .invalidRequest("an encrypted response (direct_post.jwt) carries only the response parameter (§8.3)")
            }
            let parsed: JWE
            let plaintext: [UInt8]
            do {
                parsed = try JWE.parse(jwe)
                if let kid = parsed.keyID, kid != keys.encryptionJWK.kid {
                    throw JWEError.invalidKey("kid \(kid) is not the verifier's encryption key \(keys.encryptionJWK.kid ?? "")")
                }
                plaintext = try parsed.decrypt(with: keys.encryptionKey, allowed: Set(Self.encryptionValues))
            } catch {
                throw .invalidRequest("the encrypted response cannot be decrypted: \(error)")
            }
            let object: [String: JSONValue]
            do {
                guard let value = try JSONValue.parse(plaintext).objectValue else { throw VerificationError.invalidRequest("not an object") }
                object = value
            } catch {
                throw .invalidRequest("the decrypted response is not a JSON object: \(error)")
            }
            var response = WalletResponse(encrypted: true, encryption: parsed.encryption)
            response.state = try Self.string(object["state"], "state")
            response.error = try Self.string(object["error"], "error")
            response.errorDescription = try Self.string(object["error_description"], "error_description")
            if let token = object["vp_token"] { response.vpToken = try Self.vpToken(token) }
            return response
        }
        var response = WalletResponse(encrypted: false)
        response.state = parameters["state"]
        response.error = parameters["error"]
        response.errorDescription = parameters["error_description"]
        if let text = parameters["vp_token"] {
            let token: JSONValue
            do { token = try JSONValue.parse(Array(text.utf8)) } catch {
                throw .invalidRequest("vp_token is not JSON (§8.1: a JSON object of credential query ids): \(error)")
            }
            response.vpToken = try Self.vpToken(token)
        }
        return response
    }

    private static func string(_ value: JSONValue?, _ name: String) throws(VerificationError) -> String? {
        guard let value else { return nil }
        guard let text = value.stringValue else { throw .invalidRequest("\(name) must be a string") }
        return text
    }

    /// §8.1: `{"<credential query id>": [<presentation>, ...]}`, each array non-empty.
    static func vpToken(_ value: JSONValue) throws(VerificationError) -> [String: [JSONValue]] {
        guard let object = value.objectValue else { throw .invalidRequest("vp_token must be a JSON object (§8.1)") }
        var out: [String: [JSONValue]] = [:]
        for (id, entry) in object {
            guard let array = entry.arrayValue, !array.isEmpty else {
                throw .invalidRequest("vp_token.\(id) must be a non-empty array of presentations (§8.1)")
            }
            out[id] = array
        }
        return out
    }
}
