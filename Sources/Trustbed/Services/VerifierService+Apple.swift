import Cryptography
import Issuance
import Verification

extension VerifierFactory {
    /// `services.verifier.apple`: the merchant's encryption key (the configured PEM, else one in
    /// `Keys/<name>/verifier/apple/`) and the IACA roots envelopes are checked against: the
    /// verifier's `issuer_roots` and every hosted PID Provider's IACA, read per request since
    /// those providers may start after the verifier.
    func appleService(
        _ configuration: AppleIdentityConfiguration?, context: ServiceContext, issuerRoots: [Certificate],
        files: inout [String: [UInt8]?]
    ) throws -> AppleIdentityService? {
        guard let configuration else { return nil }
        var configuredKey: PrivateKey?
        if let keyFile = configuration.keyFile {
            do {
                let resolved = try context.resolve(keyFile)
                let content = ServiceAssembly.read(resolved)
                files[resolved] = content
                guard let content else { throw CryptoError.invalidKey("cannot read the file") }
                configuredKey = try PrivateKey(pem: String(decoding: content, as: UTF8.self))
            } catch {
                throw EntityFileError(file: context.entityFile, field: "services.\(kind).apple.key", "\(keyFile): \(error)")
            }
        }
        let keys: AppleIdentityKeys
        do {
            keys = try AppleIdentityKeys.loadOrCreate(
                directory: "\(context.keysDirectory)/\(context.entityName)/verifier/apple", configuredKey: configuredKey,
                merchantID: configuration.merchantID, now: context.clock.now())
        } catch {
            throw EntityFileError(file: context.entityFile, field: "services.\(kind).apple.key", "\(error)")
        }
        let services = context.hostedServices
        return AppleIdentityService(configuration: configuration, keys: keys, clock: context.clock) {
            issuerRoots + services().values.joined().compactMap { ($0.service as? PIDProviderService)?.provider.keys.iaca }
        }
    }
}
