import Cryptography
import Foundation
import Support
import XCTest

/// AES-GCM, HKDF, Concat KDF and ECDH against published vectors.
final class SymmetricTests: XCTestCase {
    // The GCM specification (McGrew & Viega, "The Galois/Counter Mode of Operation"), test
    // cases 4 (AES-128) and 16 (AES-256): 60-byte plaintext with 20 bytes of AAD.
    private let gcmIV = hexBytes("cafebabefacedbaddecaf888")
    private let gcmAAD = hexBytes("feedfacedeadbeeffeedfacedeadbeefabaddad2")
    private let gcmPlaintext = hexBytes(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")

    func testAESGCM128MatchesGCMSpecTestCase4() throws {
        let key = hexBytes("feffe9928665731c6d6a8f9467308308")
        let box = try AESGCM.seal(gcmPlaintext, key: key, nonce: gcmIV, authenticating: gcmAAD)
        XCTAssertEqual(hexString(box.ciphertext),
            "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091")
        XCTAssertEqual(hexString(box.tag), "5bc94fbc3221a5db94fae95ae7121a47")
        XCTAssertEqual(try AESGCM.open(box, key: key, nonce: gcmIV, authenticating: gcmAAD), gcmPlaintext)
    }

    func testAESGCM256MatchesGCMSpecTestCase16() throws {
        let key = hexBytes("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let box = try AESGCM.seal(gcmPlaintext, key: key, nonce: gcmIV, authenticating: gcmAAD)
        XCTAssertEqual(hexString(box.ciphertext),
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662")
        XCTAssertEqual(hexString(box.tag), "76fc6ece0f4e1768cddf8853bb2d551b")
    }

    func testAESGCMRejectsTamperingAndBadSizes() throws {
        let key = SecureRandom.bytes(16), nonce = SecureRandom.bytes(12)
        let box = try AESGCM.seal(Array("hello".utf8), key: key, nonce: nonce, authenticating: [1, 2])
        var flipped = box.ciphertext
        flipped[0] ^= 1
        XCTAssertThrowsError(try AESGCM.open(.init(ciphertext: flipped, tag: box.tag), key: key, nonce: nonce, authenticating: [1, 2])) {
            XCTAssertEqual($0 as? CipherError, .authenticationFailed)
        }
        var badTag = box.tag
        badTag[15] ^= 0x80
        XCTAssertThrowsError(try AESGCM.open(.init(ciphertext: box.ciphertext, tag: badTag), key: key, nonce: nonce, authenticating: [1, 2])) {
            XCTAssertEqual($0 as? CipherError, .authenticationFailed)
        }
        XCTAssertThrowsError(try AESGCM.open(box, key: key, nonce: nonce, authenticating: [1, 3])) {
            XCTAssertEqual($0 as? CipherError, .authenticationFailed)
        }
        XCTAssertThrowsError(try AESGCM.open(box, key: SecureRandom.bytes(16), nonce: nonce, authenticating: [1, 2]))
        XCTAssertThrowsError(try AESGCM.open(.init(ciphertext: box.ciphertext, tag: Array(box.tag.prefix(12))), key: key, nonce: nonce)) {
            XCTAssertEqual($0 as? CipherError, .invalidTagLength(12))
        }
        XCTAssertThrowsError(try AESGCM.seal([], key: SecureRandom.bytes(20), nonce: nonce)) {
            XCTAssertEqual($0 as? CipherError, .invalidKeyLength(20))
        }
        XCTAssertThrowsError(try AESGCM.seal([], key: key, nonce: SecureRandom.bytes(16))) {
            XCTAssertEqual($0 as? CipherError, .invalidNonceLength(16))
        }
        // Empty plaintext still authenticates.
        let empty = try AESGCM.seal([], key: key, nonce: nonce)
        XCTAssertEqual(empty.ciphertext, [])
        XCTAssertEqual(try AESGCM.open(empty, key: key, nonce: nonce), [])
    }

    /// RFC 5869 Appendix A.1 (HKDF-SHA256, basic case) and A.3 (no salt, no info).
    func testHKDFMatchesRFC5869() throws {
        let okm = try KeyDerivation.hkdf(
            inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22), salt: hexBytes("000102030405060708090a0b0c"),
            info: hexBytes("f0f1f2f3f4f5f6f7f8f9"), outputLength: 42)
        XCTAssertEqual(hexString(okm), "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        let noSalt = try KeyDerivation.hkdf(inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22), outputLength: 42)
        XCTAssertEqual(hexString(noSalt), "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    /// RFC 5869 Appendix A.1 again, the two steps apart (HPKE labels each): the PRK, then the OKM.
    func testHKDFExtractAndExpandApartMatchRFC5869() throws {
        let prk = try KeyDerivation.hkdfExtract(inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22),
                                                salt: hexBytes("000102030405060708090a0b0c"))
        XCTAssertEqual(hexString(prk), "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5")
        let okm = try KeyDerivation.hkdfExpand(pseudorandomKey: prk, info: hexBytes("f0f1f2f3f4f5f6f7f8f9"), outputLength: 42)
        XCTAssertEqual(hexString(okm), "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        XCTAssertThrowsError(try KeyDerivation.hkdfExpand(pseudorandomKey: [1, 2, 3], outputLength: 16), "a PRK shorter than HashLen")
    }

    /// RFC 7518 Appendix C: ECDH-ES between Alice's ephemeral key and Bob's key, Concat KDF for
    /// "A128GCM" with apu "Alice", apv "Bob", gives exactly VqqN6vgjbSBcIijNcacQGg.
    func testECDHAndConcatKDFMatchRFC7518AppendixC() throws {
        let alice = try PrivateKey(ecCurve: "P-256", d: base64URLBytes("0_NxaRPUMQoAJt50Gz8YiTr8gRTwyEaCumd-MToTmIo"),
                                   x: base64URLBytes("gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0"),
                                   y: base64URLBytes("SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps"))
        let bob = try PrivateKey(ecCurve: "P-256", d: base64URLBytes("VEmDZpDXXK8p8N0Cndsxs924q6nS1RXFASRl6BfUqdw"),
                                 x: base64URLBytes("weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ"),
                                 y: base64URLBytes("e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck"))
        let z = try alice.sharedSecret(with: bob.publicKey)
        XCTAssertEqual(z, try bob.sharedSecret(with: alice.publicKey))
        XCTAssertEqual(z.count, 32)
        let otherInfo = KeyDerivation.concatOtherInfo(
            algorithmID: Array("A128GCM".utf8), partyUInfo: Array("Alice".utf8), partyVInfo: Array("Bob".utf8), keyBits: 128)
        let key = try KeyDerivation.concatKDF(sharedSecret: z, otherInfo: otherInfo, outputLength: 16)
        XCTAssertEqual(key, [86, 170, 141, 234, 248, 35, 109, 32, 92, 34, 40, 205, 113, 167, 16, 26])
    }

    /// Concat KDF over more than one hash block (counter 1 and 2), checked against the
    /// construction written out with SHA-256.
    func testConcatKDFUsesBigEndianCounterPerBlock() throws {
        let z = SecureRandom.bytes(32), info = Array("info".utf8)
        let key = try KeyDerivation.concatKDF(sharedSecret: z, otherInfo: info, outputLength: 48)
        let block1 = Digest.sha256([0, 0, 0, 1] + z + info), block2 = Digest.sha256([0, 0, 0, 2] + z + info)
        XCTAssertEqual(key, Array((block1 + block2).prefix(48)))
    }

    /// `sharedSecret` sets its peer without OpenSSL's full check (a second scalar
    /// multiplication) because no `PublicKey` holds a point off its curve: the JWK/COSE
    /// coordinates and a PEM SubjectPublicKeyInfo with a point moved off the curve are refused
    /// when imported, so they never reach the ECDH (SP 800-56A §5.6.2.3.4 for cofactor 1).
    func testPeerPointsOffTheCurveNeverBecomeKeys() throws {
        for curve in ["P-256", "P-384", "P-521"] {
            let key = try PrivateKey(generatingECCurve: curve).publicKey
            guard case .ec(_, let x, var y) = key.components else { return XCTFail("not EC") }
            y[y.count - 1] ^= 0x01
            XCTAssertThrowsError(try PublicKey(components: .ec(curve: curve, x: x, y: y)), curve)
            var der = try key.derSubjectPublicKeyInfo()
            der[der.count - 1] ^= 0x01
            let pem = "-----BEGIN PUBLIC KEY-----\n" + Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
                + "\n-----END PUBLIC KEY-----\n"
            XCTAssertThrowsError(try PublicKey(pem: pem), curve)
        }
    }

    /// A peer imported from its coordinates (a JWE's `epk`, a COSE key) is a copy of a per-curve
    /// template given its point (`KeyComponentsImport.ecPublicKey`), taken by the ECDH as it is;
    /// it must agree with the same peer as OpenSSL generated it, from many threads at once.
    func testECDHWithAPeerImportedFromItsCoordinates() throws {
        for curve in ["P-256", "P-384", "P-521"] {
            let a = try PrivateKey(generatingECCurve: curve), b = try PrivateKey(generatingECCurve: curve)
            let expected = try a.sharedSecret(with: b.publicKey)
            let imported = try PublicKey(components: b.publicKey.components)
            let results = Locked<[[UInt8]?]>([])
            DispatchQueue.concurrentPerform(iterations: 32) { _ in
                let secret = try? a.sharedSecret(with: imported)
                results.withLock { $0.append(secret) }
            }
            XCTAssertEqual(results.current, Array(repeating: expected, count: 32), curve)
            XCTAssertEqual(try b.sharedSecret(with: PublicKey(components: a.publicKey.components)), expected, curve)
        }
    }

    func testECDHAgreesOnEveryCurveAndRefusesMismatches() throws {
        for curve in ["P-256", "P-384", "P-521"] {
            let a = try PrivateKey(generatingECCurve: curve), b = try PrivateKey(generatingECCurve: curve)
            XCTAssertEqual(a.ecCurve, curve)
            XCTAssertEqual(try a.sharedSecret(with: b.publicKey), try b.sharedSecret(with: a.publicKey))
        }
        let p256 = try PrivateKey(generatingECCurve: "P-256"), p384 = try PrivateKey(generatingECCurve: "P-384")
        XCTAssertThrowsError(try p256.sharedSecret(with: p384.publicKey))
        XCTAssertThrowsError(try p256.sharedSecret(with: PublicKey(components: p384.publicKey.components)))
        let ed = try PrivateKey(generatingFor: .EdDSA)
        XCTAssertThrowsError(try ed.sharedSecret(with: p256.publicKey))
        XCTAssertThrowsError(try p256.sharedSecret(with: ed.publicKey))
    }

    func testPrivateKeyImportRefusesMismatchedPair() throws {
        let b = try PrivateKey(generatingECCurve: "P-256")
        guard case .ec(_, let x, let y) = b.publicKey.components else { return XCTFail("not EC") }
        XCTAssertThrowsError(try PrivateKey(ecCurve: "P-256", d: SecureRandom.bytes(32), x: x, y: y))
        XCTAssertThrowsError(try PrivateKey(ecCurve: "P-256", d: SecureRandom.bytes(31), x: x, y: y))
        XCTAssertThrowsError(try PrivateKey(ecCurve: "P-192", d: SecureRandom.bytes(24), x: x, y: y))
    }
}

func hexBytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        out.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return out
}

func hexString(_ data: [UInt8]) -> String { data.map { String(format: "%02x", $0) }.joined() }

func base64URLBytes(_ text: String) -> [UInt8] {
    var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while s.count % 4 != 0 { s += "=" }
    return [UInt8](Data(base64Encoded: s)!)
}
