import Foundation
import JSON
import Support
import Wallet

/// The shared state of one bench run: the iteration counter and the merged results. Workers
/// keep their samples locally and merge once at the end, so the lock is not on the hot path.
final class BenchRun: @unchecked Sendable {
    enum Step: String, CaseIterable {
        case offer, token, nonce, credential

        /// The step's place in `Totals.latencies` (an array, not a dictionary hashed per sample).
        var index: Int {
            switch self {
            case .offer: return 0
            case .token: return 1
            case .nonce: return 2
            case .credential: return 3
            }
        }
    }

    struct Totals {
        var flows = 0
        var credentials = 0
        var verified = 0
        /// Milliseconds per step, by `Step.index`.
        var latencies = [[Double]](repeating: [], count: Step.allCases.count)
        var errors: [String: Int] = [:]
    }

    let context: IssuerContext
    let configuration: IssuerMetadata.Configuration
    let adminToken: String
    let persona: String
    let dpop: Bool
    let batch: Int
    let plainConnections: Bool
    let keys: [HolderKey]
    let limit: Int
    let verifyEvery: Int
    let acknowledged: AcknowledgementLog?
    private let next = Locked(0)
    let totals = Locked(Totals())

    init(context: IssuerContext, configuration: IssuerMetadata.Configuration, adminToken: String, persona: String, dpop: Bool,
         batch: Int, plainConnections: Bool, keys: [HolderKey], limit: Int, verifyEvery: Int, acknowledged: AcknowledgementLog?) {
        self.context = context
        self.configuration = configuration
        self.adminToken = adminToken
        self.persona = persona
        self.dpop = dpop
        self.batch = batch
        self.plainConnections = plainConnections
        self.keys = keys
        self.limit = limit
        self.verifyEvery = verifyEvery
        self.acknowledged = acknowledged
    }

    /// The next iteration number, or nil when the run is over.
    private func claim(deadline: Date?) -> Int? {
        if let deadline, Date() >= deadline { return nil }
        return next.withLock { n in
            guard n < limit else { return nil }
            n += 1
            return n - 1
        }
    }

    func work(deadline: Date?) {
        var local = Totals()
        defer { totals.withLock { merge(local, into: &$0) } }
        let http: WalletHTTP
        do { http = try WalletHTTP(transport: plainConnections ? PlainHTTPTransport() : nil) } catch { local.errors["setup: \(error)", default: 0] += 1; return }
        let verifier = CredentialVerifier(http: http, trustAnchors: nil)
        // One session per thread: it keeps the servers' DPoP nonces from flow to flow, as one
        // busy wallet backend would (RFC 9449 does not bind a nonce to a key), so the
        // use_dpop_nonce round trip is paid once per thread, not per flow.
        let session: WalletSession
        do { session = try WalletSession(context: context, http: http, dpop: dpop) } catch {
            local.errors["setup: \(error)", default: 0] += 1
            return
        }
        let offers = context.issuer.credentialIssuer + "/admin/offers"
        // The same request every time, so its bytes and headers are built once.
        let request = JSONValue.object([
            "persona": .string(persona), "credential_configuration_ids": JSONValue([configuration.id]),
            "grant": "pre-authorized_code", "tx_code": false,
        ]).bytes
        let offerHeaders = ["Content-Type: application/json", "Accept: application/json", "Authorization: Bearer \(adminToken)"]
        while let iteration = claim(deadline: deadline) {
            var step = Step.offer
            do {
                var started = DispatchTime.now()
                let reply = try http.send("POST", offers, headers: offerHeaders, body: request)
                guard reply.status == 201, let offer = reply.json(Self.offerMembers)?["credential_offer"] else {
                    throw WalletError.server(step: "admin offers", status: reply.status, body: reply.text)
                }
                let code = try Self.preAuthorizedCode(in: offer, issuer: context.issuer.credentialIssuer, configuration: configuration.id)
                local.record(.offer, since: &started)

                step = .token
                let token = try session.preAuthorizedToken(code: code, txCode: nil)
                local.record(.token, since: &started)

                step = .nonce
                let nonce = try session.nonce()
                local.record(.nonce, since: &started)

                step = .credential
                let keys = (0..<batch).map { self.keys[(iteration * batch + $0) % self.keys.count] }
                let delivery = try session.credential(accessToken: token.accessToken, configurationID: configuration.id,
                                                      identifier: token.credentialIdentifiers[configuration.id]?.first,
                                                      keys: keys, nonce: nonce)
                local.record(.credential, since: &started)
                local.flows += 1
                local.credentials += delivery.credentials.count
                acknowledged?.record(delivery.credentials)
                if verifyEvery > 0, iteration % verifyEvery == 0, let first = delivery.credentials.first {
                    _ = try verifier.verify(first, configuration: configuration, holders: keys)
                    local.verified += 1
                }
            } catch let error as WalletError {
                local.errors[Self.kind(of: error, step: step), default: 0] += 1
                // An unreachable issuer (refused, reset: the kill -9 in the benchmark) fails at
                // once; without a pause every thread would spin on connect(2), taking the cores
                // from the issuer's restart.
                if case .transport = error { Thread.sleep(forTimeInterval: Self.transportPause) }
            } catch {
                local.errors["\(step.rawValue): \(error)", default: 0] += 1
            }
        }
    }

    static let transportPause = 0.02
    /// The admin API's answer also carries the offer's URLs and QR code links, which go unread.
    static let offerMembers = ResponseJSON("credential_offer")

    /// The pre-authorized code of an offer the admin API just made, which must name exactly this
    /// issuer and configuration and ask for no tx_code. Stricter than CredentialOffer(json:) for
    /// this case and lighter: no URL-shape check of an issuer already compared whole.
    static func preAuthorizedCode(in offer: JSONValue, issuer: String, configuration: String) throws -> String {
        guard offer["credential_issuer"]?.stringValue == issuer else {
            throw WalletError.malformed("the offer names credential_issuer \(offer["credential_issuer"]?.serialized() ?? "(none)"), not \(issuer)")
        }
        guard let ids = offer["credential_configuration_ids"]?.arrayValue, ids.count == 1, ids[0].stringValue == configuration else {
            throw WalletError.malformed("the offer's credential_configuration_ids are not [\"\(configuration)\"]")
        }
        guard let grant = offer["grants"]?[CredentialOffer.preAuthorizedGrant]?.objectValue,
              let code = grant["pre-authorized_code"]?.stringValue, !code.isEmpty else {
            throw WalletError.malformed("the offer has no pre-authorized code")
        }
        guard grant["tx_code"] == nil else { throw WalletError.malformed("the offer asks for a tx_code although none was requested") }
        return code
    }

    /// Groups errors by step and OAuth error code, not by their (unique) descriptions.
    static func kind(of error: WalletError, step: Step) -> String {
        switch error {
        case .server(_, let status, let body):
            let code = (try? JSONValue.parse(body))?["error"]?.stringValue
            return "\(step.rawValue): HTTP \(status)" + (code.map { " \($0)" } ?? "")
        case .transport(let why): return "\(step.rawValue): transport: \(why.split(separator: ":").last.map(String.init) ?? why)"
        default: return "\(step.rawValue): \(error)"
        }
    }

    private func merge(_ local: Totals, into totals: inout Totals) {
        totals.flows += local.flows
        totals.credentials += local.credentials
        totals.verified += local.verified
        for (index, samples) in local.latencies.enumerated() { totals.latencies[index] += samples }
        for (kind, n) in local.errors { totals.errors[kind, default: 0] += n }
    }
}

extension BenchRun.Totals {
    /// Milliseconds since `start`, which then moves to now (the next step's start).
    mutating func record(_ step: BenchRun.Step, since start: inout DispatchTime) {
        let now = DispatchTime.now()
        latencies[step.index].append(Double(now.uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000)
        start = now
    }
}

/// The status list entries of the SD-JWT VCs a bench run received, one line each, written with
/// one unbuffered write(2) per delivery, so the file is complete whatever happens to the server.
final class AcknowledgementLog: Sendable {
    private let descriptor: Locked<Int32>

    init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw WalletError.usage("cannot open \(path)") }
        descriptor = Locked(fd)
    }

    func record(_ credentials: [JSONValue]) {
        var text = ""
        for credential in credentials {
            guard let sdJWT = credential["credential"]?.stringValue ?? credential.stringValue,
                  let payload = sdJWT.split(separator: "~").first?.split(separator: ".").dropFirst().first,
                  let bytes = Base64URL.decode(String(payload)), let claims = try? JSONValue.parse(bytes),
                  let list = claims["status"]?["status_list"], let uri = list["uri"]?.stringValue, let index = list["idx"]?.intValue
            else { continue }
            text += "\(uri) \(index)\n"
        }
        guard !text.isEmpty else { return }
        descriptor.withLock { fd in _ = text.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) } }
    }
}
