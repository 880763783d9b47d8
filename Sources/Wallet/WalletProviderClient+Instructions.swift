import Foundation
import JOSE
import JSON
import Support

/// An answer of `POST <wp>/instructions/<name>`: the HTTP status, the body, and for a success
/// the decoded `result` of the provider's result JWT.
public struct InstructionReply: Sendable {
    public let status: Int
    public let body: JSONValue?
    public let text: String
    /// The `wp-instruction-result+jwt` and its `result` claim (nil for an error).
    public let resultJWT: String?
    public let result: JSONValue?
    /// `error` of an error answer.
    public var error: String? { body?.objectValue?["error"]?.stringValue }
}

/// NL accounts (issue 21): the wallet's side of the instruction framework
/// (docs/wallet-provider.md, "NL accounts: remote keys and instructions").
extension WalletProviderClient {
    /// `POST <wp>/instructions/challenge` `{"instance": tag}` → the challenge.
    public func instructionChallenge(tag: String) throws -> String {
        let reply = try postJSON("/instructions/challenge", ["instance": .string(tag)], step: "instruction challenge")
        guard let challenge = reply.json?["challenge"]?.stringValue, !challenge.isEmpty else {
            throw WalletError.malformed("instruction challenge: no challenge in \(reply.text)")
        }
        return challenge
    }

    /// The instruction JWT (`wp-instruction+jwt`) signed by `signer` (the PIN key, or the new
    /// PIN key of PIN recovery) and the hardware key's signature over its ASCII bytes (raw r‖s,
    /// base64url).
    public static func signInstruction(provider: String, tag: String, challenge: String, params: [String: JSONValue], signer: HolderKey,
                                       hardwareKey: HolderKey, issuedAt: Int64 = WalletProofs.now()) throws -> (instruction: String, hardwareSignature: String) {
        let claims: [String: JSONValue] = ["iss": .string(tag), "aud": .string(provider), "challenge": .string(challenge),
                                           "iat": .int(issuedAt), "params": .object(params)]
        let instruction = try signer.sign(header: ["typ": "wp-instruction+jwt"], claims: claims)
        return (instruction, Base64URL.encode(try hardwareKey.signature(Array(instruction.utf8))))
    }

    /// Challenge → signed instruction → `POST <wp>/instructions/<name>`. Returns the reply
    /// whatever its status (an error is a result tests look at); see `instruction` for the
    /// throwing form.
    public func sendInstruction(_ name: String, params: [String: JSONValue] = [:], tag: String, signer: HolderKey,
                                hardwareKey: HolderKey, challenge: String? = nil) throws -> InstructionReply {
        let challenge = try challenge ?? instructionChallenge(tag: tag)
        let signed = try Self.signInstruction(provider: provider, tag: tag, challenge: challenge, params: params, signer: signer,
                                              hardwareKey: hardwareKey)
        let body: JSONValue = ["instruction": .string(signed.instruction), "hardware_signature": .string(signed.hardwareSignature)]
        let reply = try send("POST", "/instructions/" + name, headers: ["Content-Type: application/json", "Accept: application/json"],
                             body: body.bytes)
        let json = try? JSONValue.parse(Array(reply.text.utf8))
        var jwt: String?
        var result: JSONValue?
        if reply.status == 200, let compact = json?.objectValue?["result"]?.stringValue {
            jwt = compact
            result = (try? JWS.parseClaims(compact))?.claims["result"]
        }
        return InstructionReply(status: reply.status, body: json, text: reply.text, resultJWT: jwt, result: result)
    }

    /// `sendInstruction`, throwing on anything but a result.
    public func instruction(_ name: String, params: [String: JSONValue] = [:], tag: String, signer: HolderKey,
                            hardwareKey: HolderKey) throws -> JSONValue {
        let reply = try sendInstruction(name, params: params, tag: tag, signer: signer, hardwareKey: hardwareKey)
        guard reply.status == 200, let result = reply.result else {
            throw WalletError.server(step: "instruction \(name)", status: reply.status, body: reply.text)
        }
        return result
    }
}
