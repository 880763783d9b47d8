import JSON
import Support

/// The NL account side of a test wallet file (issue 21): what `wallet register --pin` kept under
/// `nl`, and the keys an instruction is signed with.
extension TestWalletFile {
    /// The NL account's registered instance: provider, tag and hardware key; a usage error for a
    /// file without one or registered without `--pin`.
    public func nlInstance() throws -> (provider: String, tag: String, hardwareKey: HolderKey) {
        guard let jwk = hardwareKey, let tag = hardwareKeyTag, let provider else {
            throw WalletError.usage("\(path) holds no registered instance: run `trustbed wallet register --pin PIN` first")
        }
        guard nl["pin_salt"] != nil else {
            throw WalletError.usage("\(path) is not an NL account (registered without --pin)")
        }
        return (provider, tag, try HolderKey(privateJWK: jwk))
    }

    /// The PIN key derived from `pin` and the file's salt (`PINKey`). A wrong PIN gives another
    /// key, which the provider counts as a wrong PIN: the wallet file does not check it, so tests
    /// can exercise the lockout.
    public func pinKey(pin: String) throws -> HolderKey {
        guard let text = nl["pin_salt"]?.stringValue, let salt = Base64URL.decode(text) else {
            throw WalletError.usage("\(path) has no nl.pin_salt (registered without --pin)")
        }
        return try PINKey.derive(pin: pin, salt: salt)
    }
}
