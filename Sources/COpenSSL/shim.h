#ifndef TRUSTBED_COPENSSL_SHIM_H
#define TRUSTBED_COPENSSL_SHIM_H
/* Declarations only. The calls to APIs deprecated since OpenSSL 3.0 (the EC_KEY fast path) are
   made in the COpenSSLLegacy target, never from Swift. */
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/decoder.h>
#include <openssl/rand.h>
#include <openssl/bn.h>
#include <openssl/rsa.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/kdf.h>
#include <openssl/crypto.h>

#endif
