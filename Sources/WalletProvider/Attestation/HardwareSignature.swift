import Cryptography
import JSON
import Support
import SwiftASN1

/// The hardware signature of a wallet attestation request (issue 20, item 6): the device's
/// hardware key signs (ES256) the compact JSON `{"challenge" | "nonce": <nonce>,
/// "jwk_thumbprint": <RFC 7638 thumbprint of the request's cnf.jwk>}` in that member order,
/// binding the new wallet key to the registered hardware key. Android keystores hand out DER
/// signatures and JOSE libraries raw r‖s, so both are accepted, base64url.
public enum HardwareSignature {
    /// The signed bytes; `nonceMember` is `challenge` or `nonce`, whichever the request used.
    public static func clientData(nonceMember: String, nonce: String, jwkThumbprint: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.openObject()
        writer.name(nonceMember); writer.string(nonce)
        writer.name("jwk_thumbprint"); writer.string(jwkThumbprint)
        writer.closeObject()
        return writer.bytes
    }

    /// Whether `signature` (base64url of raw r‖s or of a DER ECDSA-Sig-Value) verifies over
    /// `data` with the P-256 `key`.
    public static func verify(_ signature: String, data: [UInt8], key: PublicKey) -> Bool {
        guard let bytes = Base64URL.decode(signature) else { return false }
        if bytes.count == 64 { return key.verify(signature: bytes, data: data, algorithm: .ES256) }
        guard let raw = rawFromDER(bytes) else { return false }
        return key.verify(signature: raw, data: data, algorithm: .ES256)
    }

    /// ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER } (RFC 3279 §2.2.3) as the 64-byte
    /// r‖s of JWS (RFC 7518 §3.4), parsed with swift-asn1; nil for anything else.
    static func rawFromDER(_ der: [UInt8]) -> [UInt8]? {
        guard der.count <= 72, let root = try? DER.parse(der) else { return nil }
        return try? DER.sequence(root, identifier: .sequence) { nodes -> [UInt8]? in
            let r = try ArraySlice<UInt8>(derEncoded: &nodes)
            let s = try ArraySlice<UInt8>(derEncoded: &nodes)
            guard let r32 = fixed(r), let s32 = fixed(s) else { return nil }
            return r32 + s32
        } ?? nil
    }

    /// A positive INTEGER's magnitude as exactly 32 bytes.
    private static func fixed(_ integer: ArraySlice<UInt8>) -> [UInt8]? {
        var bytes = integer
        while bytes.count > 1, bytes.first == 0 { bytes = bytes.dropFirst() }
        guard bytes.count <= 32 else { return nil }
        return [UInt8](repeating: 0, count: 32 - bytes.count) + bytes
    }
}
