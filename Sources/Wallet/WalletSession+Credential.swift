import Cryptography
import Foundation
import JOSE
import JSON

extension WalletSession {
    /// §7: a fresh `c_nonce`, or nil when the issuer has no nonce endpoint (then proofs carry none).
    public func nonce() throws -> String? {
        guard let endpoint = context.issuer.nonceEndpoint else { return nil }
        let reply = try http.send("POST", endpoint, headers: ["Accept: application/json"], body: [])
        guard reply.status == 200, let nonce = reply.json(Self.nonceMembers)?["c_nonce"]?.stringValue, !nonce.isEmpty else {
            throw WalletError.server(step: "nonce endpoint", status: reply.status, body: reply.text)
        }
        return nonce
    }

    private static let nonceMembers = ResponseJSON("c_nonce")
    /// §8.3: what the wallet reads of a credential response.
    private static let credentialMembers = ResponseJSON("credentials", "notification_id")

    /// §8: one credential per proof key. `identifier` (from the token response's
    /// `authorization_details`) replaces `configurationID` when present (§8.2). A 202 answer is
    /// polled at the deferred endpoint (§9) at the interval the issuer asked for.
    public func credential(accessToken: String, configurationID: String, identifier: String?, keys: [HolderKey],
                    maximumWait: Double = 120) throws -> CredentialDelivery {
        try credential(accessToken: accessToken, configurationID: configurationID, identifier: identifier, keys: keys,
                       nonce: try nonce(), maximumWait: maximumWait)
    }

    /// The credential request with a c_nonce already fetched (the load client times the two apart).
    public func credential(accessToken: String, configurationID: String, identifier: String?, keys: [HolderKey], nonce: String?,
                    maximumWait: Double = 120) throws -> CredentialDelivery {
        let proofs: [String]
        if let keyAttester {
            // The EUDI wallets' form (Appendix F.1): `kid` is the key's index in the attestation's
            // `attested_keys`, `key_attestation` in the header, no `jwk`.
            let attestation = try keyAttester(keys, nonce)
            proofs = try keys.enumerated().map { index, key in
                var claims: [String: JSONValue] = ["aud": .string(context.issuer.credentialIssuer), "iat": .int(WalletProofs.now())]
                if let nonce { claims["nonce"] = .string(nonce) }
                if let clientID { claims["iss"] = .string(clientID) }
                return try key.sign(header: ["typ": .string(HolderKey.keyProofType), "kid": .string(String(index)),
                                             "key_attestation": .string(attestation)], claims: claims)
            }
        } else {
            proofs = try keys.map {
                try WalletProofs.keyProof(key: $0, audience: context.issuer.credentialIssuer, nonce: nonce, clientID: clientID)
            }
        }
        return try credential(accessToken: accessToken, configurationID: configurationID, identifier: identifier, proofs: proofs,
                              maximumWait: maximumWait)
    }

    /// The credential request with proofs made elsewhere: by keys a Wallet Provider holds for
    /// the wallet (issue 21's `create_proofs`, `start_pin_recovery`), one credential per proof.
    public func credential(accessToken: String, configurationID: String, identifier: String?, proofs: [String],
                           maximumWait: Double = 120) throws -> CredentialDelivery {
        let encryption = try responseEncryptionKey()
        var request = JSONWriter(capacity: proofs.reduce(160 + configurationID.utf8.count) { $0 + $1.utf8.count + 3 })
        request.openObject()
        if let identifier {
            request.member("credential_identifier", identifier)
        } else {
            request.member("credential_configuration_id", configurationID)
        }
        if let encryption { request.member("credential_response_encryption", encryption.member) }
        request.member("proofs", ["jwt": JSONValue(proofs)])
        request.closeObject()
        let reply = try post(context.issuer.credentialEndpoint, request.bytes, responseKey: encryption?.key, accessToken: accessToken,
                             step: "credential endpoint")
        if reply.status == 202 { return try deferred(reply.json, accessToken: accessToken, maximumWait: maximumWait) }
        guard reply.status == 200 else { throw WalletError.server(step: "credential endpoint", status: reply.status, body: reply.text) }
        return try delivery(reply.json(Self.credentialMembers), step: "credential response", deferred: false)
    }

    /// §9: polls with the transaction_id until the credential arrives. 1.0 Final answers 202
    /// again while pending; earlier drafts used the `issuance_pending` error, also accepted.
    private func deferred(_ first: [String: JSONValue]?, accessToken: String, maximumWait: Double) throws -> CredentialDelivery {
        guard let endpoint = context.issuer.deferredCredentialEndpoint else {
            throw WalletError.malformed("202 from the credential endpoint, but no deferred_credential_endpoint in the metadata")
        }
        guard let transaction = first?["transaction_id"]?.stringValue else {
            throw WalletError.malformed("202 without transaction_id: \(first.map { JSONValue.object($0).serialized() } ?? "")")
        }
        var interval = Double(first?["interval"]?.intValue ?? 5)
        let deadline = Date().addingTimeInterval(maximumWait)
        while true {
            guard Date().addingTimeInterval(interval) < deadline else {
                throw WalletError.malformed("the deferred credential did not arrive within \(Int(maximumWait)) s")
            }
            Thread.sleep(forTimeInterval: max(0.05, interval))
            let encryption = try responseEncryptionKey()
            var request = JSONWriter(capacity: 64 + transaction.utf8.count)
            request.openObject()
            if let encryption { request.member("credential_response_encryption", encryption.member) }
            request.member("transaction_id", transaction)
            request.closeObject()
            let reply = try post(endpoint, request.bytes, responseKey: encryption?.key, accessToken: accessToken,
                                 step: "deferred endpoint")
            switch reply.status {
            case 200:
                return try delivery(reply.json(Self.credentialMembers), step: "deferred credential response", deferred: true)
            case 202:
                if let next = reply.json?["interval"]?.intValue { interval = Double(next) }
            case 400 where reply.json?["error"]?.stringValue == "issuance_pending":
                if let next = reply.json?["interval"]?.intValue { interval = Double(next) }
            default:
                throw WalletError.server(step: "deferred endpoint", status: reply.status, body: reply.text)
            }
        }
    }

    /// §11: tells the issuer the credentials were accepted (204 expected).
    public func notify(accessToken: String, notificationID: String, event: String = "credential_accepted") throws {
        guard let endpoint = context.issuer.notificationEndpoint else { return }
        let body: JSONValue = ["notification_id": .string(notificationID), "event": .string(event)]
        let reply = try exchange("POST", endpoint, server: .resource, accessToken: accessToken,
                                 headers: ["Content-Type: application/json"], body: body.bytes)
        guard reply.status == 204 || reply.status == 200 else {
            throw WalletError.server(step: "notification endpoint", status: reply.status, body: reply.text)
        }
    }

    // MARK: - encryption and parsing

    /// POSTs a JSON request to the issuer. When the issuer requires it (§8.2, §10), the request
    /// asks for the response encrypted to a fresh ECDH-ES key (`responseKey`, its
    /// `credential_response_encryption` member from responseEncryptionKey()), and is itself sent
    /// encrypted to the issuer's key as `application/jwt`.
    private func post(_ url: String, _ request: [UInt8], responseKey: PrivateKey?, accessToken: String, step: String) throws -> WalletHTTP.Reply {
        var body = request
        var contentType = "application/json"
        if let (recipient, enc) = try requestEncryptionKey() {
            do {
                body = Array(try JWE.encrypt(body, to: recipient, encryption: enc).utf8)
            } catch { throw WalletError.malformed("cannot encrypt the request to the issuer's key: \(error)") }
            contentType = "application/jwt"
        }
        var reply = try exchange("POST", url, server: .resource, accessToken: accessToken,
                                 headers: ["Content-Type: \(contentType)", "Accept: application/json, application/jwt"], body: body)
        if let key = responseKey, (200..<300).contains(reply.status), reply.contentType == "application/jwt" {
            do {
                let plaintext = try JWE.parse(reply.text.trimmingCharacters(in: .whitespacesAndNewlines)).decrypt(with: key)
                reply = WalletHTTP.Reply(status: reply.status, body: plaintext, headers: reply.headers)
            } catch { throw WalletError.verification("\(step): cannot decrypt the encrypted response: \(error)") }
        }
        return reply
    }

    /// §12.2.4 `credential_response_encryption`: used only when `encryption_required`. A fresh
    /// key, and the request member that names it.
    private func responseEncryptionKey() throws -> (key: PrivateKey, member: JSONValue)? {
        guard let metadata = context.issuer.json["credential_response_encryption"],
              metadata["encryption_required"]?.boolValue == true else { return nil }
        guard (metadata["alg_values_supported"]?.stringArray ?? []).contains(JWE.ecdhES) else {
            throw WalletError.malformed("the issuer requires response encryption without offering ECDH-ES")
        }
        let encs = metadata["enc_values_supported"]?.stringArray ?? []
        guard let enc = ["A128GCM", "A256GCM"].first(where: encs.contains) else {
            throw WalletError.malformed("the issuer requires response encryption without offering A128GCM or A256GCM")
        }
        let key = try HolderKey()
        var jwk = key.publicJWK
        jwk["alg"] = .string(JWE.ecdhES)
        jwk["use"] = "enc"
        jwk["kid"] = .string(WalletProofs.randomToken(8))
        return (key.privateKey, ["jwk": .object(jwk), "enc": .string(enc)])
    }

    /// §12.2.4 `credential_request_encryption`: the issuer's encryption key, used only when required.
    private func requestEncryptionKey() throws -> (JWK, JWEContentEncryption)? {
        guard let metadata = context.issuer.json["credential_request_encryption"],
              metadata["encryption_required"]?.boolValue == true else { return nil }
        let encs = metadata["enc_values_supported"]?.stringArray ?? []
        guard let enc = [JWEContentEncryption.A128GCM, .A256GCM].first(where: { encs.contains($0.rawValue) }) else {
            throw WalletError.malformed("the issuer requires request encryption without offering A128GCM or A256GCM")
        }
        guard let keys = metadata["jwks"]?["keys"]?.arrayValue,
              let key = keys.compactMap({ try? JWK(json: $0.objectValue ?? [:]) })
                .first(where: { $0.kty == "EC" && ($0.algorithm == nil || $0.algorithm == JWE.ecdhES) }) else {
            throw WalletError.malformed("credential_request_encryption.jwks has no ECDH-ES key")
        }
        return (key, enc)
    }

    private func delivery(_ json: [String: JSONValue]?, step: String, deferred: Bool) throws -> CredentialDelivery {
        guard let json else { throw WalletError.malformed("\(step) is not a JSON object") }
        return try reading(step) { () throws(JSONReadError) in
            let reader = JSONReader(json)
            var credentials: [JSONValue] = []
            for field in try reader.array("credentials", nonEmpty: true) { credentials.append(try field.object().field("credential").value) }
            return CredentialDelivery(credentials: credentials, notificationID: try reader.optionalString("notification_id"), deferred: deferred)
        }
    }
}
