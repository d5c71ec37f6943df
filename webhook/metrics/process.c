/*
 * process.c — the process_* metrics every Prometheus client exports about
 * its own process (client_golang's process collector, with its names and
 * help texts), read from /proc at each scrape: resident and virtual
 * memory, CPU seconds, open and maximum file descriptors, start time. An
 * operator alerts on resident memory against the container's limit.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "webhook/metrics/metrics.h"

struct proc_stat {
	unsigned long long utime, stime, starttime, vsize;
	long long rss; /* pages */
};

/* /proc/self/stat's fields after the command (which may hold spaces and
 * parentheses: read from the last ')'). */
static bool read_stat(struct proc_stat *st)
{
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	/* fields 3.. : state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime cutime cstime priority nice threads
	 * itrealvalue starttime vsize rss */
	return p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d "
				  "%*d %*d %*d %*d %llu %llu %lld",
			   &st->utime, &st->stime, &st->starttime, &st->vsize, &st->rss) == 5;
}

/* The boot time (Unix seconds) from /proc/stat; 0 when unknown. */
static long long boot_time(void)
{
	char line[256];
	long long bt = 0;
	FILE *f = fopen("/proc/stat", "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &bt) == 1)
			break;
	if (f)
		fclose(f);
	return bt;
}

/* Open descriptors: the entries of /proc/self/fd, less the one reading it. */
static long long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	long long n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n > 0 ? n - 1 : 0;
}

int tw_metrics_render_process(tp_buf *o)
{
	struct proc_stat st;
	if (!read_stat(&st))
		return 0; /* no /proc: nothing to say */
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	long long max_fds = getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY
				    ? -1 : (long long)rl.rlim_cur;
	double start = (double)boot_time() + (double)st.starttime / (double)(tck > 0 ? tck : 100);
	return tp_buf_addf(
		o,
		"# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
		"# TYPE process_cpu_seconds_total counter\n"
		"process_cpu_seconds_total %.2f\n"
		"# HELP process_max_fds Maximum number of open file descriptors.\n"
		"# TYPE process_max_fds gauge\n"
		"process_max_fds %lld\n"
		"# HELP process_open_fds Number of open file descriptors.\n"
		"# TYPE process_open_fds gauge\n"
		"process_open_fds %lld\n"
		"# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
		"# TYPE process_resident_memory_bytes gauge\n"
		"process_resident_memory_bytes %lld\n"
		"# HELP process_start_time_seconds Start time of the process since unix epoch in "
		"seconds.\n"
		"# TYPE process_start_time_seconds gauge\n"
		"process_start_time_seconds %.2f\n"
		"# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
		"# TYPE process_virtual_memory_bytes gauge\n"
		"process_virtual_memory_bytes %llu\n",
		(double)(st.utime + st.stime) / (double)(tck > 0 ? tck : 100), max_fds, open_fds(),
		st.rss * (long long)page, start, st.vsize);
}
