import Cryptography
import JSON
import Support

/// `POST <rp>/apple/identity` without HTTP: `{"envelope": <base64 of the CBOR envelope>,
/// "nonce": <base64 of the nonce bytes>}` in, the `VerificationReport` out. A request that is not
/// that shape is `invalid_request`; an envelope that fails a check is a report with
/// `"state": "refused"` naming it.
public struct AppleIdentityService: Sendable {
    public let configuration: AppleIdentityConfiguration
    public let keys: AppleIdentityKeys
    public let clock: Clock
    /// IACA roots, read per request: the verifier's `issuer_roots` and the IACA of every PID
    /// Provider hosted here (they may start after the verifier).
    public let trustAnchors: @Sendable () -> [Certificate]

    public init(configuration: AppleIdentityConfiguration, keys: AppleIdentityKeys, clock: Clock,
                trustAnchors: @escaping @Sendable () -> [Certificate]) {
        self.configuration = configuration
        self.keys = keys
        self.clock = clock
        self.trustAnchors = trustAnchors
    }

    /// At most this many bytes of envelope: an mdoc with a portrait is a few kilobytes.
    public static let maximumEnvelopeSize = 256 * 1024

    public func verify(_ body: JSONValue) throws(VerificationError) -> VerificationReport {
        guard let object = body.objectValue else { throw .invalidRequest("the body is a JSON object {\"envelope\", \"nonce\"}") }
        guard let envelopeText = object["envelope"]?.stringValue else {
            throw .invalidRequest("envelope: the base64 of the CBOR envelope is missing")
        }
        guard let nonceText = object["nonce"]?.stringValue else { throw .invalidRequest("nonce: the base64 of the nonce is missing") }
        guard envelopeText.utf8.count <= Self.maximumEnvelopeSize * 4 / 3 + 4 else {
            throw .invalidRequest("envelope: larger than \(Self.maximumEnvelopeSize) bytes")
        }
        guard let envelope = Self.base64(envelopeText), !envelope.isEmpty else { throw .invalidRequest("envelope: not base64") }
        guard let nonce = Self.base64(nonceText), !nonce.isEmpty else { throw .invalidRequest("nonce: not base64, or empty") }
        let verifier = AppleIdentityVerifier(recipientKey: keys.key, merchantID: configuration.merchantID,
                                             teamID: configuration.teamID, trustAnchors: trustAnchors())
        return verifier.verify(envelope: envelope, nonce: nonce, at: clock.now())
    }

    /// Standard base64 (Apple's samples) or base64url, padded or not.
    static func base64(_ text: String) -> [UInt8]? {
        var url = ""
        url.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "+": url.append("-")
            case "/": url.append("_")
            case "=": continue
            default: url.append(character)
            }
        }
        return Base64URL.decode(url)
    }
}
