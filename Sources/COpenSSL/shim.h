#ifndef TRUSTBED_COPENSSL_SHIM_H
#define TRUSTBED_COPENSSL_SHIM_H
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

/* The legacy EC_KEY calls behind Cryptography's PKCS8ECKey.makeKey and ECDSASigner (why they are
   worth it: see makeKey), made here so that Swift does not warn about their deprecation at each
   call on every build. On success the EVP_PKEY owns the EC_KEY returned in ec_out. */
static inline EVP_PKEY *trustbed_legacy_ec_pkey(const EC_GROUP *group, const unsigned char *scalar, size_t scalar_length,
                                                const unsigned char *point, size_t point_length, EC_KEY **ec_out) {
    EC_KEY *ec = EC_KEY_new();
    BIGNUM *d = BN_secure_new();
    EVP_PKEY *pkey = NULL;
    if (ec != NULL && d != NULL && EC_KEY_set_group(ec, group) == 1 && BN_bin2bn(scalar, (int)scalar_length, d) != NULL
        && EC_KEY_set_private_key(ec, d) == 1 && EC_KEY_oct2key(ec, point, point_length, NULL) == 1
        && (pkey = EVP_PKEY_new()) != NULL && EVP_PKEY_assign(pkey, EVP_PKEY_EC, ec) == 1) {
        BN_clear_free(d);
        *ec_out = ec;
        return pkey;
    }
    EVP_PKEY_free(pkey);
    EC_KEY_free(ec);
    BN_clear_free(d);
    return NULL;
}

static inline ECDSA_SIG *trustbed_legacy_ecdsa_sign(const unsigned char *digest, int length, EC_KEY *ec) {
    return ECDSA_do_sign(digest, length, ec);
}

/* A public-only legacy EC_KEY on `group` (copied) with `point` decoded by EC_KEY_oct2key, which
   refuses a point off the curve, inside an EVP_PKEY that owns it (see PublicKey's legacyEC). */
static inline EVP_PKEY *trustbed_legacy_ec_public_pkey(const EC_GROUP *group, const unsigned char *point, size_t point_length,
                                                       EC_KEY **ec_out) {
    EC_KEY *ec = EC_KEY_new();
    EVP_PKEY *pkey = NULL;
    if (ec != NULL && EC_KEY_set_group(ec, group) == 1 && EC_KEY_oct2key(ec, point, point_length, NULL) == 1
        && (pkey = EVP_PKEY_new()) != NULL && EVP_PKEY_assign(pkey, EVP_PKEY_EC, ec) == 1) {
        *ec_out = ec;
        return pkey;
    }
    EVP_PKEY_free(pkey);
    EC_KEY_free(ec);
    return NULL;
}

/* ECDSA_do_verify of r and s (big-endian, `size` bytes each) over `digest`: 1 valid, 0 invalid,
   -1 error. It refuses r or s outside [1, n-1] as EVP_DigestVerify does. */
static inline int trustbed_legacy_ecdsa_verify(const unsigned char *digest, int length, const unsigned char *rs, int size,
                                               EC_KEY *ec) {
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(rs, size, NULL);
    BIGNUM *s = BN_bin2bn(rs + size, size, NULL);
    int result = -1;
    if (sig != NULL && r != NULL && s != NULL && ECDSA_SIG_set0(sig, r, s) == 1) {
        r = s = NULL; /* owned by sig now */
        result = ECDSA_do_verify(digest, length, sig, ec);
    }
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(sig);
    return result;
}
#endif
