import CBOR
import Cryptography

/// The SessionTranscript a device signature covers (ISO/IEC 18013-5 §9.1.5.1):
///
///     SessionTranscript = [DeviceEngagementBytes, EReaderKeyBytes, Handover]
///
/// Online presentations set the first two to null and define their own Handover: OpenID4VP's
/// (`openID4VP(...)`), Apple's identity presentment (built by the verifier that knows it), or
/// any other through `init(value:)`. The transcript is kept as the exact bytes that go into
/// DeviceAuthentication and, for Apple's envelope, into HPKE's `info`.
public struct SessionTranscript: Equatable, Sendable {
    public let value: CBORValue
    /// The deterministic encoding of `value`, spliced as is into DeviceAuthentication.
    public let bytes: [UInt8]

    /// A transcript of any shape (the hook for handovers this module does not know).
    public init(value: CBORValue) {
        self.value = value
        self.bytes = value.encoded()
    }

    /// `[null, null, handover]`: what online presentations use.
    public init(handover: CBORValue) {
        self.init(value: [.null, .null, handover])
    }

    /// OpenID4VP 1.0 Appendix B.2.6.1 (invocation via redirects):
    ///
    ///     OpenID4VPHandover = ["OpenID4VPHandover", OpenID4VPHandoverInfoHash]
    ///     OpenID4VPHandoverInfoHash = SHA-256(CBOR [clientId, nonce, jwkThumbprint, responseUri])
    ///
    /// `clientId` with its Client Identifier Prefix; `jwkThumbprint` the RFC 7638 SHA-256
    /// thumbprint of the verifier's response encryption key when the response is encrypted
    /// (`direct_post.jwt`), else nil (CBOR null); `responseUri` the `response_uri` or
    /// `redirect_uri` of the request.
    public static func openID4VP(clientID: String, nonce: String, jwkThumbprint: [UInt8]?, responseURI: String) -> SessionTranscript {
        let info: CBORValue = [.text(clientID), .text(nonce), jwkThumbprint.map { .bytes($0) } ?? .null, .text(responseURI)]
        return SessionTranscript(handover: ["OpenID4VPHandover", .bytes(Digest.sha256(info.encoded()))])
    }

    /// Apple's identity presentment (Verify with Wallet, "Verifying Wallet identity requests"):
    ///
    ///     SessionTranscript = [null, null, AppleHandover]
    ///     AppleHandover = ["AppleIdentityPresentment_1.0", nonce, merchantID, teamID, pkRHash]
    ///
    /// `nonce` the raw bytes the app passed to the request, `pkRHash` the SHA-256 of the
    /// merchant's encryption public key; the same bytes are HPKE's `info`.
    public static func appleIdentityPresentment(nonce: [UInt8], merchantID: String, teamID: String, pkRHash: [UInt8]) -> SessionTranscript {
        SessionTranscript(handover: ["AppleIdentityPresentment_1.0", .bytes(nonce), .text(merchantID), .text(teamID), .bytes(pkRHash)])
    }

    /// DeviceAuthenticationBytes (§9.1.3.4): `#6.24(bstr .cbor ["DeviceAuthentication",
    /// SessionTranscript, DocType, DeviceNameSpacesBytes])`, the detached payload of the device
    /// signature. Written around the transcript's bytes so they go in exactly as they are.
    public func deviceAuthenticationBytes(docType: String, deviceNameSpacesBytes: [UInt8]) -> [UInt8] {
        var inner: [UInt8] = []
        CBORValue.writeHead(4, 4, into: &inner)
        CBORValue.text("DeviceAuthentication").encode(into: &inner)
        inner += bytes
        CBORValue.text(docType).encode(into: &inner)
        CBORValue.tagged(CBORValue.tagEncodedCBOR, .bytes(deviceNameSpacesBytes)).encode(into: &inner)
        return CBORValue.tagged(CBORValue.tagEncodedCBOR, .bytes(inner)).encoded()
    }
}
