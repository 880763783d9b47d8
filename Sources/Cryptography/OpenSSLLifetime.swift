import COpenSSL

/// How long OpenSSL's global state lives in this process.
public enum OpenSSLLifetime {
    /// Keeps libcrypto's global state (providers, algorithm caches, error tables) until the
    /// process is gone, instead of letting OpenSSL free it from its atexit handler
    /// (`OPENSSL_INIT_NO_ATEXIT`, OpenSSL 3 `OPENSSL_init_crypto(3)`).
    ///
    /// `exit()` runs atexit handlers while other threads keep running; a thread still inside
    /// libcrypto then uses freed memory. The server stops and waits for its own threads first,
    /// but some are not its to join (a resolve waiting on a remote host, Dispatch's workers), and
    /// freeing memory the kernel takes back a moment later buys nothing. Only the first
    /// initialisation decides, so call this before anything else touches OpenSSL; later calls
    /// change nothing.
    public static func keepUntilProcessExit() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
