/*
 * sshkey.c — the MPI plugin's SSH key pair, made with OpenSSL.
 *
 * Upstream's controller makes a fresh ECDSA P-521 key for every MPI
 * TrainJob and stores it in the <trainjob>-mpi-ssh-auth Secret: the private
 * key as a traditional "EC PRIVATE KEY" PEM, the public key as an OpenSSH
 * authorized_keys line. The library takes the pair as input (it stays pure);
 * the binary makes it here, or reads it from a file for repeatable output.
 */
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/admission/sshkey.h"

#define CURVE_NAME "nistp521"
#define KEY_TYPE "ecdsa-sha2-" CURVE_NAME

void tw_sshkey_free(tw_sshkey *k)
{
	if (!k)
		return;
	free(k->private_pem);
	free(k->public_line);
	k->private_pem = k->public_line = NULL;
}

/* OpenSSH's wire string: a 4-byte big-endian length, then the bytes. */
static int put_string(tp_buf *b, const void *p, size_t n)
{
	unsigned char len[4] = { (unsigned char)(n >> 24), (unsigned char)(n >> 16),
				 (unsigned char)(n >> 8), (unsigned char)n };
	int rc = tp_buf_add(b, len, 4);
	return rc ? rc : tp_buf_add(b, p, n);
}

static char *public_line(EVP_PKEY *pkey)
{
	unsigned char point[256];
	size_t plen = 0;
	if (!EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point),
					     &plen))
		return NULL;
	tp_buf blob = TP_BUF_INIT(0), line = TP_BUF_INIT(0);
	char *out = NULL;
	if (!put_string(&blob, KEY_TYPE, strlen(KEY_TYPE)) &&
	    !put_string(&blob, CURVE_NAME, strlen(CURVE_NAME)) &&
	    !put_string(&blob, point, plen) && !tp_buf_adds(&line, KEY_TYPE " ") &&
	    !tp_base64_encode(blob.data, blob.len, &line))
		out = strdup(line.data);
	tp_buf_free(&blob);
	tp_buf_free(&line);
	return out;
}

static char *private_pem(EVP_PKEY *pkey)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *out = NULL;
	if (bio && PEM_write_bio_PrivateKey_traditional(bio, pkey, NULL, NULL, 0, NULL, NULL)) {
		char *data;
		long n = BIO_get_mem_data(bio, &data);
		if (n > 0 && (out = malloc((size_t)n + 1)) != NULL) {
			memcpy(out, data, (size_t)n);
			out[n] = '\0';
		}
	}
	BIO_free(bio);
	return out;
}

static int from_pkey(EVP_PKEY *pkey, tw_sshkey *out, char *err, size_t errlen)
{
	out->private_pem = private_pem(pkey);
	out->public_line = public_line(pkey);
	if (!out->private_pem || !out->public_line) {
		tw_sshkey_free(out);
		snprintf(err, errlen, "cannot encode the SSH key (OpenSSL)");
		return TW_ECRYPTO;
	}
	return 0;
}

int tw_sshkey_generate(tw_sshkey *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-521");
	if (!pkey) {
		snprintf(err, errlen, "cannot generate an ECDSA P-521 key (OpenSSL)");
		return TW_ECRYPTO;
	}
	int rc = from_pkey(pkey, out, err, errlen);
	EVP_PKEY_free(pkey);
	return rc;
}

int tw_sshkey_read(const char *path, tw_sshkey *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open the SSH key file", path);
		return TP_EIO;
	}
	EVP_PKEY *pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	char name[64] = "";
	size_t nlen = 0;
	if (!pkey || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC ||
	    !EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, name, sizeof(name),
					    &nlen) ||
	    (strcmp(name, "secp521r1") && strcmp(name, "P-521"))) {
		EVP_PKEY_free(pkey);
		snprintf(err, errlen, "%s: not an ECDSA P-521 private key in PEM (make one with: "
				      "openssl ecparam -name secp521r1 -genkey -noout)", path);
		return TW_EFAILED;
	}
	int rc = from_pkey(pkey, out, err, errlen);
	EVP_PKEY_free(pkey);
	return rc;
}
