/// Benchmark-only. What one iteration of `trustbed wallet bench` does (`--flow`).
///
/// `plain` is the PID Provider's pre-authorized flow without attestations (issue 7). The others
/// load the Wallet Provider (issue 20, docs/wallet-provider.md): `register` is a whole instance
/// registration (nonce → development key attestation → `/wallet-instance`); `attest` and
/// `attest-legacy` a wallet attestation in the new wire format (`/wallet-attestations`,
/// `wp-war+jwt`) or the older one (`/token`, jwt-bearer `war+jwt`), for instances registered
/// before the clock starts; `pid` the attested HAIP flow against a PID Provider that demands
/// client attestation, DPoP and key attestations (`pid-provider-haip`). `present-sdjwt`,
/// `present-mdoc` and `apple` load the verifier (issue 22, docs/verifier.md): an OpenID4VP
/// request made through its admin API, answered as `wallet present` answers it, or an Apple
/// identity envelope posted to `<rp>/apple/identity`.
public enum BenchFlow: String, CaseIterable, Sendable {
    case plain, register, attest
    case attestLegacy = "attest-legacy"
    case pid
    case presentSDJWT = "present-sdjwt"
    case presentMDoc = "present-mdoc"
    case apple
    /// Issue 21: an NL account's `sign` instruction with a key the provider holds (challenge →
    /// instruction), for instances registered with a PIN key before the clock starts.
    case sign
    /// A whole PIN recovery (issue 21; `RecoveryFlows.swift`).
    case pinRecovery = "pin-recovery"

    public struct UnknownFlow: Error, CustomStringConvertible {
        public let value: String
        public var description: String {
            "unknown flow \(value) (\(BenchFlow.allCases.map(\.rawValue).joined(separator: ", ")))"
        }
    }

    /// `--flow`'s value, exactly as spelled.
    public init(parsing value: String) throws(UnknownFlow) {
        guard let flow = BenchFlow(rawValue: value) else { throw UnknownFlow(value: value) }
        self = flow
    }

    /// The steps one iteration times, in order (the report's rows).
    public var steps: [BenchRun.Step] {
        switch self {
        case .plain: return [.offer, .token, .nonce, .credential]
        case .register: return [.nonce, .deviceAttestation, .registration]
        case .attest, .attestLegacy: return [.nonce, .deviceAttestation, .walletAttestation]
        case .pid: return [.offer, .token, .nonce, .keyAttestation, .credential]
        case .presentSDJWT, .presentMDoc: return [.presentationRequest, .requestObject, .answer, .response]
        case .apple: return [.envelope, .identity]
        case .sign: return [.challenge, .instruction]
        case .pinRecovery: return [.offer, .token, .nonce, .startPINRecovery, .credential, .disclosure]
        }
    }

    /// Whether the flow loads the verifier (`--verifier`, and a wallet file with the credentials).
    public var needsVerifier: Bool { self == .presentSDJWT || self == .presentMDoc || self == .apple }

    /// Whether the flow needs `--issuer` (and an admin token for its offers).
    public var needsIssuer: Bool { self == .plain || self == .pid || self == .pinRecovery }
    /// Whether the flow needs `--provider`, the Wallet Provider's entity ID.
    public var needsProvider: Bool { self != .plain && !needsVerifier }
    /// Whether an iteration ends with credentials (the rest end with a 2xx of the provider).
    public var issuesCredentials: Bool { needsIssuer }
}

extension BenchRun {
    /// The timed steps of every flow. For the Wallet Provider's flows `nonce` is the provider's
    /// `GET <wp>/nonce`; for the issuers' the OpenID4VCI nonce endpoint.
    public enum Step: String, CaseIterable, Sendable {
        case offer, token, nonce, credential
        /// `POST <wp>/dev/key-attestation`: the development device attests the hardware key.
        case deviceAttestation = "device_attestation"
        /// `POST <wp>/wallet-instance` (204).
        case registration
        /// `POST <wp>/wallet-attestations`, or `<wp>/token` in the legacy wire format.
        case walletAttestation = "wallet_attestation"
        /// `GET <wp>/nonce` + `POST <wp>/key-attestations` for the proof keys (OpenID4VCI 1.0 Appendix D).
        case keyAttestation = "key_attestation"
        /// `POST <rp>/admin/presentation-requests`: the relying party's request.
        case presentationRequest = "presentation_request"
        /// GET `request_uri` and the request object's checks, as `wallet present` does them.
        case requestObject = "request_object"
        /// The wallet's work: selection, KB-JWT or device signature, the JWE (no HTTP).
        case answer
        /// POST to `response_uri`: the verifier's verification (200 only when verified).
        case response
        /// Apple's envelope made by the wallet (device signature, HPKE seal; no HTTP).
        case envelope
        /// `POST <rp>/apple/identity`: opened and verified by the verifier.
        case identity
        /// `POST <wp>/instructions/challenge`, and `POST <wp>/instructions/<name>` (issue 21).
        case challenge, instruction
        /// Challenge + `POST <wp>/instructions/start_pin_recovery` (issue 21).
        case startPINRecovery = "start_pin_recovery"
        /// Challenge + `POST <wp>/instructions/disclose_recovery_code`.
        case disclosure = "disclose_recovery_code"

        /// The step's place in `Totals.latencies` (an array, not a dictionary hashed per sample).
        var index: Int {
            switch self {
            case .offer: return 0
            case .token: return 1
            case .nonce: return 2
            case .credential: return 3
            case .deviceAttestation: return 4
            case .registration: return 5
            case .walletAttestation: return 6
            case .keyAttestation: return 7
            case .presentationRequest: return 8
            case .requestObject: return 9
            case .answer: return 10
            case .response: return 11
            case .envelope: return 12
            case .identity: return 13
            case .challenge: return 14
            case .instruction: return 15
            case .startPINRecovery: return 16
            case .disclosure: return 17
            }
        }
    }
}
