/*
 * OpenSSL APIs deprecated since 3.0 (EC_KEY_*, EVP_PKEY_assign of an EC_KEY, ECDSA_do_sign,
 * ECDSA_do_verify), for Cryptography's EC_KEY fast path: see
 * Sources/Cryptography/Legacy/ECKeyFastPath.swift for why, what keeps it correct and how to
 * remove it. This is the only file that calls them, so the deprecation warnings are switched
 * off here and nowhere else.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "trustbed_legacy_ec_key.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>

EVP_PKEY *trustbed_legacy_ec_pkey(const EC_GROUP *group, const unsigned char *scalar, size_t scalar_length,
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

ECDSA_SIG *trustbed_legacy_ecdsa_sign(const unsigned char *digest, int length, EC_KEY *ec) {
    return ECDSA_do_sign(digest, length, ec);
}

EVP_PKEY *trustbed_legacy_ec_public_pkey(const EC_GROUP *group, const unsigned char *point, size_t point_length,
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

int trustbed_legacy_ecdsa_verify(const unsigned char *digest, int length, const unsigned char *rs, int size,
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
