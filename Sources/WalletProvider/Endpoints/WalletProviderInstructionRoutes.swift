import HTTP
import JSON

extension WalletProviderRoutes {
    /// NL accounts (issue 21): `POST <wp>/instructions/challenge` `{"instance"}` →
    /// `{"challenge"}`, and `POST <wp>/instructions/<name>` `{"instruction",
    /// "hardware_signature"}` → `{"result": <JWT>}`. Errors carry their extra members
    /// (`attempts_left`, `pin_failures` of `invalid_pin`) beside `error` and `error_description`.
    func addInstructionRoutes(to router: inout Router<String>) {
        let provider = self.provider
        router.post("/instructions/challenge", policy: .perClient) { _, request, _ in
            let challenge = try provider.issueInstructionChallenge(InstructionChallengeRequest.parse(Self.jsonObjectBody(request)))
            return .json(["challenge": .string(challenge)])
        }
        // Bodies up to a 1 MiB transfer payload and its instruction (the server's limit is 1 MiB).
        router.post("/instructions/{name}", policy: .perClient, bodyLimit: InstructionRequest.maximumBodyLength) { _, request, parameters in
            do throws(WalletProviderError) {
                let name = parameters.require("name")
                let body = try Self.jsonObjectBody(request)
                let result = try provider.performInstruction(named: name, InstructionRequest.parse(body))
                return .json(["result": .string(result)])
            } catch {
                guard !error.extra.isEmpty else { throw error }
                var body: [String: JSONValue] = error.extra
                body["error"] = .string(error.code)
                body["error_description"] = .string(ErrorDescription.sanitized(error.errorDescription))
                return .json(.object(body), status: error.status)
            }
        }
    }
}
