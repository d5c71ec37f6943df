/*
 * webhook/core/files.c — a whole file (or standard input) into a buffer,
 * within a size limit: manifests, request bodies, kubeconfigs, keys.
 */
#include "webhook/core/files.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define READ_CHUNK 65536

/* Reads at most max + 1 bytes: one byte past the limit proves it is passed
 * without holding more of an endless stream in memory. */
static int read_stream(FILE *f, size_t max, tp_buf *buf)
{
	char chunk[READ_CHUNK];
	size_t total = 0;
	for (;;) {
		size_t want = max - total + 1 < sizeof(chunk) ? max - total + 1 : sizeof(chunk);
		size_t n = fread(chunk, 1, want, f);
		if (n == 0)
			break;
		total += n;
		if (total > max)
			return TP_ELIMIT;
		int rc = tp_buf_add(buf, chunk, n);
		if (rc)
			return rc;
	}
	return ferror(f) ? TP_EIO : TP_OK;
}

int tw_read_file(const char *path, size_t max, tp_buf *buf)
{
	if (!path || !buf)
		return TP_EINVAL;
	bool is_stdin = !strcmp(path, "-");
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	if (!f)
		return TP_EIO;
	struct stat st;
	int rc = TP_OK;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		rc = TP_EIO;
	} else if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size > max) {
		rc = TP_ELIMIT; /* known too big: not a byte read */
	}
	size_t before = buf->len;
	if (!rc)
		rc = read_stream(f, max, buf);
	if (rc) {
		int saved = errno;
		buf->len = before; /* nothing half-read is left behind */
		if (buf->data)
			buf->data[before] = '\0';
		errno = saved;
	}
	if (!is_stdin)
		fclose(f);
	return rc;
}

const char *tw_read_failure(int e, const char *folder_note)
{
	static _Thread_local char why[256];
	if (e == EISDIR)
		snprintf(why, sizeof(why), "a folder, not a file: %s", folder_note);
	else if (e == ENOENT)
		snprintf(why, sizeof(why), "no such file");
	else
		snprintf(why, sizeof(why), "cannot read it: %s", strerror(e ? e : EIO));
	return why;
}
