/*
 * compact.c — `make bench`'s request bodies as the API server sends them.
 *
 *   compact IN OUT
 *
 * The API server marshals an AdmissionReview with Go's encoding/json: one
 * line, no whitespace between tokens. The bodies kept in the repository are
 * indented for people to read (deploy/samples/admissionreview-trainjob.json
 * is 1,247 bytes indented, 953 compact), so the bench posts this compact form
 * of them: the same JSON, without the 25-60% of bytes the API server never
 * sends. Exit 1 when IN is not one JSON document.
 */
#include <stdio.h>

#include "policy/trainpolicy.h"
#include "webhook/core/files.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: compact IN OUT\n");
		return 2;
	}
	tp_buf in = TP_BUF_INIT(0), out = TP_BUF_INIT(0);
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	tp_docs *docs = NULL;
	tp_load_error err = { 0 };
	int rc = 1;
	if (tw_read_file(argv[1], (size_t)64 << 20, &in))
		fprintf(stderr, "compact: cannot read %s\n", argv[1]);
	else if (tp_load(in.data, in.len, &lim, &docs, &err))
		fprintf(stderr, "compact: %s:%d:%d: %s\n", argv[1], err.line, err.column, err.msg);
	else if (tp_docs_count(docs) != 1 || tp_json_write(tp_docs_at(docs, 0)->obj, &out))
		fprintf(stderr, "compact: %s: want one JSON document\n", argv[1]);
	else {
		FILE *f = fopen(argv[2], "wb");
		rc = !f || fwrite(out.data, 1, out.len, f) != out.len;
		if (f && fclose(f))
			rc = 1;
		if (rc)
			fprintf(stderr, "compact: cannot write %s\n", argv[2]);
	}
	tp_docs_free(docs);
	tp_buf_free(&out);
	tp_buf_free(&in);
	return rc;
}
