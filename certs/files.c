/*
 * files.c — reading PEM files and writing new ones safely.
 *
 * A new file is written under a temporary name in the destination folder,
 * created with its final mode (O_EXCL, so a key is never readable by others,
 * not even for a moment), synced, and then moved into place in one step: a
 * reader (the server's certificate watcher) never sees half a file.
 */
#include "certs/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tw_certs_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *tw_certs_ssl_reason(char *buf, size_t n)
{
	unsigned long e = ERR_peek_error();
	if (!e) {
		snprintf(buf, n, "unknown reason");
	} else {
		const char *r = ERR_reason_error_string(e);
		if (r)
			snprintf(buf, n, "%s", r);
		else
			ERR_error_string_n(e, buf, n);
	}
	ERR_clear_error();
	return buf;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

int tw_certs_read_file(const char *path, char **data, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return tw_certs_fail(err, errlen, TW_CERTS_EIO, "cannot open %s: %s", path,
				     strerror(errno));
	char *buf = malloc(TW_CERTS_MAX_FILE + 1);
	if (!buf) {
		fclose(f);
		return tw_certs_fail(err, errlen, TW_CERTS_ECRYPTO, "out of memory reading %s", path);
	}
	size_t n = fread(buf, 1, TW_CERTS_MAX_FILE + 1, f);
	int bad = ferror(f);
	int saved = errno;
	fclose(f);
	if (bad || n > TW_CERTS_MAX_FILE) {
		free(buf);
		return tw_certs_fail(err, errlen, TW_CERTS_EIO, "cannot read %s: %s", path,
				     bad ? strerror(saved) : "larger than 1 MiB, not a PEM file");
	}
	buf[n] = '\0';
	*data = buf;
	if (len)
		*len = n;
	return TW_CERTS_OK;
}

int tw_certs_mkdir(const char *dir, char *err, size_t errlen)
{
	if (!*dir)
		return tw_certs_fail(err, errlen, TW_CERTS_EINVAL, "the output folder is empty: "
				     "pass a folder name");
	char *p = strdup(dir);
	if (!p)
		return tw_certs_fail(err, errlen, TW_CERTS_ECRYPTO, "out of memory");
	int rc = TW_CERTS_OK;
	/* Each prefix in turn, like mkdir -p; an existing one is fine. */
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		struct stat st;
		if (mkdir(p, 0700) && errno != EEXIST) {
			rc = tw_certs_fail(err, errlen, TW_CERTS_EIO, "cannot create folder %s: %s",
					   p, strerror(errno));
			break;
		}
		if (c == '\0' && (stat(p, &st) || !S_ISDIR(st.st_mode))) {
			rc = tw_certs_fail(err, errlen, TW_CERTS_EIO,
					   "%s exists and is not a folder: choose another --out", p);
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return rc;
}

bool tw_certs_exists(const char *dir, const char *name)
{
	char *p = join(dir, name);
	struct stat st;
	bool yes = p && lstat(p, &st) == 0;
	free(p);
	return yes;
}

/* All of data to fd, as write(2) reports: -1 means failed, errno says why. */
static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t w = write(fd, data, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		data += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Open a new dir/.name.XXXXXXXX with mode; the suffix is random so that two
 * writers never pick the same name. The fd, as open(2) returns it: -1 means
 * none, errno says why. */
static int open_tmp(const char *dir, const char *name, unsigned mode, char **tmp)
{
	for (int tries = 0; tries < 16; tries++) {
		unsigned char r[4];
		if (RAND_bytes(r, sizeof(r)) != 1)
			return errno = EIO, -1;
		char leaf[256];
		snprintf(leaf, sizeof(leaf), ".%s.%02x%02x%02x%02x", name, r[0], r[1], r[2], r[3]);
		char *p = join(dir, leaf);
		if (!p)
			return errno = ENOMEM, -1;
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, (mode_t)mode);
		if (fd >= 0) {
			*tmp = p;
			return fd;
		}
		free(p);
		if (errno != EEXIST)
			return -1;
	}
	return errno = EEXIST, -1;
}

int tw_certs_stage(const char *dir, const char *name, const char *data, size_t len,
		   unsigned mode, char **tmp, char *err, size_t errlen)
{
	int fd = open_tmp(dir, name, mode, tmp);
	if (fd < 0)
		return tw_certs_fail(err, errlen, TW_CERTS_EIO, "cannot create a file in %s: %s",
				     dir, strerror(errno));
	int bad = write_all(fd, data, len) || fsync(fd);
	int saved = errno;
	if (close(fd))
		bad = 1, saved = errno;
	if (bad) {
		unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
		return tw_certs_fail(err, errlen, TW_CERTS_EIO, "cannot write %s/%s: %s", dir,
				     name, strerror(saved));
	}
	return TW_CERTS_OK;
}

/* Move without replacing: renameat2's RENAME_NOREPLACE, or a hard link where
 * the file system lacks it. Either fails with EEXIST on an existing target.
 * As rename(2), which the caller calls in its place: -1 means failed, errno
 * says why. */
static int move_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -1;
	if (link(from, to))
		return -1;
	unlink(from);
	return 0;
}

int tw_certs_publish(const char *tmp, const char *dir, const char *name, bool force,
		     char *err, size_t errlen)
{
	char *to = join(dir, name);
	if (!to) {
		unlink(tmp);
		return tw_certs_fail(err, errlen, TW_CERTS_ECRYPTO, "out of memory");
	}
	int rc = TW_CERTS_OK;
	if ((force ? rename(tmp, to) : move_noreplace(tmp, to)) != 0) {
		if (errno == EEXIST)
			rc = tw_certs_fail(err, errlen, TW_CERTS_EEXIST,
					   "%s already exists: pass --force to replace it", to);
		else
			rc = tw_certs_fail(err, errlen, TW_CERTS_EIO, "cannot write %s: %s", to,
					   strerror(errno));
		unlink(tmp);
	}
	free(to);
	return rc;
}

void tw_certs_sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* best effort: the files themselves are already synced */
		close(fd);
	}
}
