import CBOR

/// The encryption envelope of Apple's Verify with Wallet response (PassKit's
/// `PKIdentityDocument.encryptedData`; Apple's guide "Verifying Wallet identity requests"):
///
///     HPKEEnvelope = { "algorithm": tstr,   ; always "APPLE-HPKE-v1"
///                      "params": HPKEParams,
///                      "data": bstr }       ; the HPKE ciphertext || tag
///     HPKEParams = { "mode": uint,          ; always 0 (HPKE base mode)
///                    "pkEm": bstr,          ; the sender's ephemeral public key (HPKE enc)
///                    "pkRHash": bstr,       ; SHA-256 of the recipient public key
///                    "infoHash": bstr }     ; SHA-256 of HPKE's info (the SessionTranscript)
///
/// Decoded as received; what the values must be is checked by `AppleIdentityVerifier`, so the
/// report can say which one is wrong.
public struct AppleIdentityEnvelope: Equatable, Sendable {
    public static let algorithmName = "APPLE-HPKE-v1"

    public let algorithm: String
    public let mode: UInt64
    public let pkEm: [UInt8]
    public let pkRHash: [UInt8]
    public let infoHash: [UInt8]
    public let data: [UInt8]

    public init(algorithm: String = AppleIdentityEnvelope.algorithmName, mode: UInt64 = 0, pkEm: [UInt8], pkRHash: [UInt8],
                infoHash: [UInt8], data: [UInt8]) {
        self.algorithm = algorithm
        self.mode = mode
        self.pkEm = pkEm
        self.pkRHash = pkRHash
        self.infoHash = infoHash
        self.data = data
    }

    /// Strict CBOR (bounded nesting, lengths checked against the input); a bad field is named
    /// by its path, e.g. `HPKEEnvelope.params.pkEm: expected a byte string, got text string`.
    public init(decoding bytes: [UInt8]) throws(CBORFieldError) {
        let value: CBORValue
        do { value = try CBORValue.decode(bytes) } catch { throw CBORFieldError(path: "HPKEEnvelope", reason: "\(error)") }
        let root = try CBORField(value, path: "HPKEEnvelope").map()
        algorithm = try root.required("algorithm").text()
        let params = try root.required("params").map()
        mode = try params.required("mode").uint()
        pkEm = try params.required("pkEm").bytes()
        pkRHash = try params.required("pkRHash").bytes()
        infoHash = try params.required("infoHash").bytes()
        data = try root.required("data").bytes()
    }

    public var cborValue: CBORValue {
        ["algorithm": .text(algorithm),
         "params": ["mode": .unsigned(mode), "pkEm": .bytes(pkEm), "pkRHash": .bytes(pkRHash), "infoHash": .bytes(infoHash)],
         "data": .bytes(data)]
    }

    public func encoded() -> [UInt8] { cborValue.encoded() }
}
