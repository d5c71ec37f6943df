/*
 * curvekey.c — the Flux plugin's CURVE key pair, made with OpenSSL.
 *
 * Flux's brokers authenticate each other with a ZeroMQ CURVE certificate
 * held in the <trainjob>-flux-curve Secret. Upstream's controller does not
 * draw it at random: the X25519 secret key is the SHA-256 of the TrainJob's
 * uid, so that every reconcile writes the same Secret; the public key
 * follows from it. The library takes the pair as input (it stays free of
 * cryptography); the binary derives it here, draws one for a TrainJob that
 * has no uid yet, or reads one from a file for repeatable output.
 */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "webhook/admission/curvekey.h"

int tw_curvekey_from_secret(const unsigned char *secret, tp_curve_key *out, char *err,
			    size_t errlen)
{
	memset(out, 0, sizeof(*out));
	EVP_PKEY *pkey =
		EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, secret, TP_CURVE_KEY_LEN);
	size_t n = TP_CURVE_KEY_LEN;
	int ok = pkey && EVP_PKEY_get_raw_public_key(pkey, out->public_key, &n) &&
		 n == TP_CURVE_KEY_LEN;
	EVP_PKEY_free(pkey);
	if (!ok) {
		snprintf(err, errlen, "cannot compute the X25519 public key (OpenSSL)");
		return TW_ECRYPTO;
	}
	memcpy(out->secret_key, secret, TP_CURVE_KEY_LEN);
	return 0;
}

int tw_curvekey_from_uid(const char *uid, tp_curve_key *out, char *err, size_t errlen)
{
	unsigned char digest[TP_CURVE_KEY_LEN];
	unsigned int n = 0;
	if (!EVP_Digest(uid, strlen(uid), digest, &n, EVP_sha256(), NULL) ||
	    n != TP_CURVE_KEY_LEN) {
		snprintf(err, errlen, "cannot hash the TrainJob's uid (OpenSSL)");
		return TW_ECRYPTO;
	}
	return tw_curvekey_from_secret(digest, out, err, errlen);
}

int tw_curvekey_generate(tp_curve_key *out, char *err, size_t errlen)
{
	unsigned char secret[TP_CURVE_KEY_LEN];
	if (RAND_bytes(secret, sizeof(secret)) != 1) {
		snprintf(err, errlen, "cannot draw a CURVE secret key (OpenSSL)");
		return TW_ECRYPTO;
	}
	int rc = tw_curvekey_from_secret(secret, out, err, errlen);
	OPENSSL_cleanse(secret, sizeof(secret));
	return rc;
}

int tw_curvekey_read(const char *path, tp_curve_key *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open the CURVE key file", path);
		return TP_EIO;
	}
	EVP_PKEY *pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	unsigned char secret[TP_CURVE_KEY_LEN];
	size_t n = sizeof(secret);
	int ok = pkey && EVP_PKEY_get_base_id(pkey) == EVP_PKEY_X25519 &&
		 EVP_PKEY_get_raw_private_key(pkey, secret, &n) && n == TP_CURVE_KEY_LEN;
	EVP_PKEY_free(pkey);
	if (!ok) {
		snprintf(err, errlen, "%s: not an X25519 private key in PEM (make one with: "
				      "openssl genpkey -algorithm X25519)", path);
		return TW_EFAILED;
	}
	int rc = tw_curvekey_from_secret(secret, out, err, errlen);
	OPENSSL_cleanse(secret, sizeof(secret));
	return rc;
}
