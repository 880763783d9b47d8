#ifndef TRUSTBED_LEGACY_EC_KEY_H
#define TRUSTBED_LEGACY_EC_KEY_H
/*
 * The C half of Cryptography's EC_KEY fast path (Sources/Cryptography/Legacy/ECKeyFastPath.swift
 * says why it exists, what keeps it correct and how to remove it). These calls use OpenSSL's
 * EC_KEY and ECDSA_do_* APIs, deprecated since OpenSSL 3.0; they are made in
 * trustbed_legacy_ec_key.c, the only file that may call them, so Swift never imports a
 * deprecated function. Nothing else in the project may call these functions.
 */
#include <stddef.h>

/* OpenSSL's types by their struct tags (EC_GROUP, EC_KEY, ECDSA_SIG, EVP_PKEY), so that this
   header includes no OpenSSL header: those reach Swift through COpenSSL alone (imported twice,
   their compound macros such as OSSL_KEYMGMT_SELECT_ALL_PARAMETERS stop importing). */
struct ec_group_st;
struct ec_key_st;
struct ECDSA_SIG_st;
struct evp_pkey_st;

/* A key pair as a legacy EC_KEY on `group` (copied) with the private scalar and the public point
   (SEC 1 uncompressed, decoded by EC_KEY_oct2key, which refuses a point off the curve), inside a
   new EVP_PKEY that owns it. On success the EC_KEY is returned in ec_out; NULL on failure. */
struct evp_pkey_st *trustbed_legacy_ec_pkey(const struct ec_group_st *group, const unsigned char *scalar,
                                            size_t scalar_length, const unsigned char *point, size_t point_length,
                                            struct ec_key_st **ec_out);

/* ECDSA_do_sign of `digest` with the key pair `ec`; the caller frees the result. */
struct ECDSA_SIG_st *trustbed_legacy_ecdsa_sign(const unsigned char *digest, int length, struct ec_key_st *ec);

/* A public-only legacy EC_KEY on `group` (copied) with `point` decoded by EC_KEY_oct2key, inside a
   new EVP_PKEY that owns it. On success the EC_KEY is returned in ec_out; NULL on failure. */
struct evp_pkey_st *trustbed_legacy_ec_public_pkey(const struct ec_group_st *group, const unsigned char *point,
                                                   size_t point_length, struct ec_key_st **ec_out);

/* ECDSA_do_verify of r and s (big-endian, `size` bytes each) over `digest`: 1 valid, 0 invalid,
   -1 error. It refuses r or s outside [1, n-1] as EVP_DigestVerify does. */
int trustbed_legacy_ecdsa_verify(const unsigned char *digest, int length, const unsigned char *rs, int size,
                                 struct ec_key_st *ec);
#endif
