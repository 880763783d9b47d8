#ifndef TRUSTBED_COPENSSL_SHIM_H
#define TRUSTBED_COPENSSL_SHIM_H
/* Declarations only. Nothing deprecated since OpenSSL 3.0 (legacy EC keys and the ECDSA
   calls on them, ...) is called: Swift warns on such a call, and the build has no such warning. */
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
