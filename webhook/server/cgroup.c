/*
 * webhook/server/cgroup.c — the container's memory limit, where the default
 * memory budget comes from (budget.h).
 *
 * /proc/self/cgroup names the process's cgroup: "0::/path" under cgroup v2,
 * "N:...memory...:/path" under v1. The limit is memory.max (v2) or
 * memory.limit_in_bytes (v1) of that folder, or of a folder above it when
 * that one is smaller (a pod's limit sits above its container's). With a
 * cgroup namespace the path is "/" and the mount shows the container's own
 * folder at its root; without one the full path is under the mount.
 */
#include "webhook/server/budget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values from here up mean "no limit" (v1 writes 2^63 rounded to a page). */
#define NO_LIMIT ((uint64_t)1 << 62)

/* The number in path into *out: 0 when there is a limit; -1 means none
 * ("max", over NO_LIMIT, no such file or not a number). */
static int read_limit(const char *path, uint64_t *out)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[64] = "";
	char *ok = fgets(line, sizeof(line), f);
	fclose(f);
	char *end;
	unsigned long long v = ok ? strtoull(line, &end, 10) : 0;
	if (!ok || end == line || (*end && *end != '\n') || v >= NO_LIMIT)
		return -1;
	*out = v;
	return 0;
}

/* The smallest limit in file name of dir/path and every folder above it. */
static int smallest_up(const char *dir, const char *path, const char *name, uint64_t *out)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s", path);
	int found = -1;
	for (;;) {
		char file[1400];
		uint64_t v;
		snprintf(file, sizeof(file), "%s%s/%s", dir, strcmp(p, "/") ? p : "", name);
		if (!read_limit(file, &v) && (found || v < *out)) {
			*out = v;
			found = 0;
		}
		char *slash = strrchr(p, '/');
		if (!slash || slash == p) {
			if (!strcmp(p, "/"))
				return found;
			snprintf(p, sizeof(p), "/");
			continue;
		}
		*slash = '\0';
	}
}

/* budget.h: 0 with *out set; -1 means no limit is set or none can be read
 * (a value the caller reads as "no limit", not a failure). */
int tw_cgroup_memory_limit(const char *root, uint64_t *out)
{
	char path[1100];
	snprintf(path, sizeof(path), "%s/proc/self/cgroup", root);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[1100];
	int rc = -1;
	while (rc && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || c2[1] != '/')
			continue;
		*c1 = *c2 = '\0';
		const char *ctrls = c1 + 1, *cg = c2 + 1;
		char dir[1100];
		if (!strcmp(line, "0") && !*ctrls) { /* v2 */
			snprintf(dir, sizeof(dir), "%s/sys/fs/cgroup", root);
			rc = smallest_up(dir, cg, "memory.max", out);
		} else if (strstr(ctrls, "memory")) { /* v1 */
			snprintf(dir, sizeof(dir), "%s/sys/fs/cgroup/memory", root);
			rc = smallest_up(dir, cg, "memory.limit_in_bytes", out);
		}
	}
	fclose(f);
	return rc;
}

/* MemTotal in bytes, 0 when unknown. */
static uint64_t mem_total(const char *root)
{
	char path[1100], line[128];
	snprintf(path, sizeof(path), "%s/proc/meminfo", root);
	FILE *f = fopen(path, "r");
	unsigned long long kib = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kib * 1024;
}

size_t tw_budget_default(const char *root, char *source, size_t n)
{
	uint64_t limit;
	if (!tw_cgroup_memory_limit(root, &limit)) {
		snprintf(source, n, "half the container's memory limit of %llu MiB",
			 (unsigned long long)(limit >> 20));
		return (size_t)(limit / 2);
	}
	uint64_t total = mem_total(root) / 2, cap = (uint64_t)1 << 30;
	snprintf(source, n, "no container memory limit: half the machine's memory, at most "
			    "1 GiB");
	return (size_t)(total && total < cap ? total : cap);
}
