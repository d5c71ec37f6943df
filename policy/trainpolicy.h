/*
 * trainpolicy.h — the one public header of libtrainpolicy.
 *
 * The library decides every admission question about Kubeflow Trainer objects
 * (TrainingRuntime, ClusterTrainingRuntime, TrainJob; OME's ome.io/v1beta1
 * runtimes) and expands a TrainJob plus its runtime into the JobSet that runs it.
 * It does no I/O of its own, opens no sockets and starts no threads.
 *
 * Conventions (libgit2 style):
 *  - names are tp_<module>_<verb>;
 *  - a function that can fail returns int: 0 (TP_OK) or a negative TP_E* code;
 *  - results come back through out-parameters the caller owns and releases with
 *    the matching *_free;
 *  - validation never "fails": it fills a tp_result with field errors and
 *    warnings, Kubernetes field.ErrorList style, and the caller decides.
 *
 * Memory: cJSON trees are allocated through the hooks installed by tp_json_init().
 * Between tp_arena_enter() and tp_arena_leave() every cJSON node made on the
 * calling thread lives in that arena and is released with it, all at once.
 */
#ifndef TRAINPOLICY_H
#define TRAINPOLICY_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ------------------------------------------------------------------ errors */

typedef enum tp_error {
	TP_OK = 0,
	TP_ENOMEM = -1,       /* out of memory, or an arena/buffer hit its hard limit */
	TP_EINVAL = -2,       /* a bad argument */
	TP_EPARSE = -3,       /* the input is not valid YAML or JSON */
	TP_ELIMIT = -4,       /* the input is over a hard limit (size, depth, aliases, documents) */
	TP_ENOTFOUND = -5,    /* a looked-up object is not there */
	TP_EUNSUPPORTED = -6, /* a kind, version or operation this library does not handle */
	TP_ECONFLICT = -7,    /* a JSON Patch test or path did not apply */
	TP_EIO = -8,          /* reserved for callers that read files */
	TP_EUNAVAILABLE = -9, /* the cluster could not be asked (API server down, timeout):
			       * nothing can be decided, the request can be retried */
	TP_ETIMEDOUT = -10,   /* the caller's deadline (tp_deadline) passed before the work
			       * was done: nothing was decided */
	/* TW_EFIRST and below: the binary's own (webhook/, certs/), which the
	 * library never returns; one range, so no number means two things */
	TW_EFIRST = -100,
	TW_EFAILED = -100,    /* failed: the message beside the code says why */
	TW_EEXIST = -101,     /* a file to write exists and force was not given */
	TW_EBAD = -102,       /* a certificate pair is unusable (its reason says why) */
	TW_ECRYPTO = -103,    /* OpenSSL failed (out of memory, no randomness) */
} tp_error;

/* A static, human-readable sentence for a TP_E* code. Never NULL. */
const char *tp_strerror(int code);

/* ------------------------------------------------------------------- arena */

typedef struct tp_arena tp_arena;

/* A bump allocator released all at once. limit is the most bytes it may hand
 * out (0: 64 MiB); past it allocations return NULL. */
int tp_arena_new(tp_arena **out, size_t limit);
void tp_arena_free(tp_arena *a);
/* Forget every allocation but keep memory for reuse: one block as large as
 * all of them were (up to 256 KiB; past it, the first block). */
void tp_arena_reset(tp_arena *a);
void *tp_arena_alloc(tp_arena *a, size_t n);
char *tp_arena_strdup(tp_arena *a, const char *s);
char *tp_arena_strndup(tp_arena *a, const char *s, size_t n);
char *tp_arena_printf(tp_arena *a, const char *fmt, ...) TP_PRINTF(2, 3);
char *tp_arena_vprintf(tp_arena *a, const char *fmt, va_list ap);
size_t tp_arena_used(const tp_arena *a);
/* True when p points into memory this arena handed out. */
bool tp_arena_owns(const tp_arena *a, const void *p);

/* Install the cJSON allocation hooks (idempotent, thread-safe). */
void tp_json_init(void);
/* Route this thread's cJSON allocations into a (NULL: back to malloc).
 * Returns the arena that was current, to give back to tp_arena_leave(). */
tp_arena *tp_arena_enter(tp_arena *a);
void tp_arena_leave(tp_arena *previous);
tp_arena *tp_arena_current(void);

/* ---------------------------------------------------------------- deadline */

/*
 * A bound on the work of the calls a thread makes while a deadline is
 * entered (thread-local, like the arena). The library counts steps, one per
 * element its loops and lookups visit, and every few thousand steps
 * compares them with the budget and reads the monotonic clock; once either
 * limit has passed, the long loops stop and the call returns TP_ETIMEDOUT:
 * no verdict and no output, which a caller must never read as an allow.
 * The server enters one per request, at the API server's ?timeout=.
 */
typedef struct tp_deadline {
	int64_t at_ns;        /* tp_monotonic_ns() past which work stops; 0: no time limit */
	uint64_t budget;      /* most steps; 0: no limit */
	uint64_t steps;       /* steps counted while entered */
	bool expired;         /* a limit has passed; stays set */
	uint64_t next_check;  /* private: the step count at which the limits are read next */
} tp_deadline;

/* CLOCK_MONOTONIC in nanoseconds, the clock of tp_deadline.at_ns. */
int64_t tp_monotonic_ns(void);
/* Count this thread's work into d (NULL: no bound) until tp_deadline_leave.
 * Returns the deadline that was current, to give back to tp_deadline_leave. */
tp_deadline *tp_deadline_enter(tp_deadline *d);
void tp_deadline_leave(tp_deadline *previous);

/* ------------------------------------------------------------------ buffer */

/* A growable byte buffer with a hard size limit (curl's dynbuf). Always
 * NUL-terminated when data is not NULL. Memory comes from malloc. */
typedef struct tp_buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max; /* hard limit on len (0: TP_BUF_DEFAULT_MAX); past it appends fail
		     * with TP_ELIMIT */
} tp_buf;

#define TP_BUF_DEFAULT_MAX ((size_t)1 << 30)

#define TP_BUF_INIT(limit) { NULL, 0, 0, (limit) }

void tp_buf_init(tp_buf *b, size_t max);
int tp_buf_add(tp_buf *b, const void *p, size_t n);
/* Make room for n more bytes now (one allocation for a body of known size). */
int tp_buf_reserve(tp_buf *b, size_t n);
int tp_buf_adds(tp_buf *b, const char *s);
int tp_buf_addc(tp_buf *b, char c);
int tp_buf_addf(tp_buf *b, const char *fmt, ...) TP_PRINTF(2, 3);
int tp_buf_vaddf(tp_buf *b, const char *fmt, va_list ap);
/* Append s (NULL: "") as Go's %q writes a string: in quotes, with quotes,
 * backslashes, \n, \t and \r escaped, other control bytes as \xNN and
 * UTF-8 kept as it is; the texts of the API server's messages. */
int tp_buf_add_quoted(tp_buf *b, const char *s);
/* Append v as compact JSON, the bytes cJSON_PrintUnformatted would make.
 * TP_OK, TP_ENOMEM, TP_ELIMIT (the buffer's limit) or TP_EINVAL (a node
 * cJSON cannot print either). */
int tp_json_write(const cJSON *v, tp_buf *out);
void tp_buf_reset(tp_buf *b); /* len = 0, memory kept */
/* Append the RFC 4648 base64 (padded, one line) of n bytes. */
int tp_base64_encode(const void *data, size_t n, tp_buf *out);
/* Append the bytes n characters of padded base64 stand for (TP_EPARSE when
 * they are not base64). */
int tp_base64_decode(const char *in, size_t n, tp_buf *out);
void tp_buf_free(tp_buf *b);

/* The library's keyed hash of n bytes (SipHash-1-3 under a key drawn once
 * per process): for a caller's own table of keys an input may choose, which
 * no input can then make collide. */
uint64_t tp_hash_bytes(const void *p, size_t n);

/* ------------------------------------------------------------------ result */

/* Kubernetes field.ErrorType, rendered with upstream's words. */
typedef enum tp_field_type {
	TP_FIELD_REQUIRED,    /* "Required value" */
	TP_FIELD_INVALID,     /* "Invalid value" */
	TP_FIELD_UNSUPPORTED, /* "Unsupported value" */
	TP_FIELD_FORBIDDEN,   /* "Forbidden" */
	TP_FIELD_DUPLICATE,   /* "Duplicate value" */
	TP_FIELD_TOO_LONG,    /* "Too long" */
	TP_FIELD_TOO_MANY,    /* "Too many" */
	TP_FIELD_NOT_FOUND,   /* "Not found" */
	TP_FIELD_INTERNAL,    /* "Internal error" */
	TP_FIELD_PLAIN,       /* a plain error with no field (upstream "unsupported runtime: X") */
} tp_field_type;

typedef struct tp_field_error {
	tp_field_type type;
	const char *path;   /* "spec.trainer.numNodes"; NULL for TP_FIELD_PLAIN */
	const char *value;  /* the bad value as rendered, NULL when the type shows none */
	const char *detail; /* may be "" */
} tp_field_error;

typedef struct tp_result tp_result;

int tp_result_new(tp_result **out);
void tp_result_free(tp_result *r);
void tp_result_clear(tp_result *r);

size_t tp_result_error_count(const tp_result *r);
const tp_field_error *tp_result_error_at(const tp_result *r, size_t i);
size_t tp_result_warning_count(const tp_result *r);
const char *tp_result_warning_at(const tp_result *r, size_t i);
static inline bool tp_result_ok(const tp_result *r) { return tp_result_error_count(r) == 0; }
/* The audit annotations a review answer carries (key/value pairs). */
size_t tp_result_annotation_count(const tp_result *r);
void tp_result_annotation_at(const tp_result *r, size_t i, const char **key, const char **value);
int tp_result_annotate(tp_result *r, const char *key, const char *value);
/* Mark the result as undecided: something it needed could not be looked up
 * (TP_EUNAVAILABLE). Its errors then explain an error answer (HTTP 500 in
 * the AdmissionReview's status), never a denial a user should act on. */
void tp_result_set_unavailable(tp_result *r);
bool tp_result_unavailable(const tp_result *r);

/* Append one field error. value is the rendered bad value (NULL for types
 * that show none); detail is a printf format. */
int tp_result_add(tp_result *r, tp_field_type type, const char *path, const char *value,
		  const char *detail_fmt, ...) TP_PRINTF(5, 6);
/* Append a warning; identical texts are kept once; newlines become spaces. */
int tp_result_warn(tp_result *r, const char *fmt, ...) TP_PRINTF(2, 3);
/* The same, about the field at path ("spec.mlPolicy.torch.numProcPerNode"),
 * so that offline reports can point at it. */
int tp_result_warn_at(tp_result *r, const char *path, const char *fmt, ...) TP_PRINTF(3, 4);
/* The field warning i is about, or NULL (an object-wide warning). */
const char *tp_result_warning_path_at(const tp_result *r, size_t i);

/* Append from's errors and warnings to r, in their order. */
int tp_result_append(tp_result *r, const tp_result *from);

/* One error rendered exactly as k8s field.Error.Error(). */
int tp_field_error_format(const tp_field_error *e, tp_buf *out);
/* All errors as upstream aggregates them: one error plain, several "[e1, e2]". */
int tp_result_format(const tp_result *r, tp_buf *out);

/* Render a cJSON value the way the messages show it: strings quoted, numbers
 * as integers when integral, objects/arrays as compact JSON. Result lives in
 * the result's memory. */
const char *tp_result_value(tp_result *r, const cJSON *v);
const char *tp_result_quote(tp_result *r, const char *s);

/* ------------------------------------------------------- object access
 *
 * Paths are dot-separated member names: tp_get(obj, "spec.trainer.numNodes").
 * A NULL object or a missing member gives NULL. No array indexing here:
 * iterate arrays with cJSON_ArrayForEach.
 */
const cJSON *tp_get(const cJSON *obj, const char *dotted);
/* The member named key exactly (dots and all), or NULL when obj is not an
 * object or has none. */
const cJSON *tp_member(const cJSON *obj, const char *key);
/* String member or NULL (NULL also when the member is not a string). */
const char *tp_get_str(const cJSON *obj, const char *dotted);
/* Integer member: true and *out set when present and an integral number. */
bool tp_get_int(const cJSON *obj, const char *dotted, long long *out);
/* Boolean member: true only when present and true. */
bool tp_get_true(const cJSON *obj, const char *dotted);
/* Present and of that JSON type. */
const cJSON *tp_get_object(const cJSON *obj, const char *dotted);
const cJSON *tp_get_array(const cJSON *obj, const char *dotted);

/* Element of array arr whose member key equals name (by string compare). */
const cJSON *tp_find_named(const cJSON *arr, const char *key, const char *name);
/* The JSON type of v in OpenAPI words ("object", "array", "string",
 * "boolean", "integer" for integral numbers, "number", "null"), as the
 * API server's type errors name it. */
const char *tp_json_type_name(const cJSON *v);
/* True when v is a number with an integral value that fits in long long. */
bool tp_json_is_int(const cJSON *v, long long *out);
/* Deep equality with Kubernetes' semantic flavour for our purposes:
 * member order ignored, numbers compared by value. NULL equals NULL. */
bool tp_json_equal(const cJSON *a, const cJSON *b);
/* Deep equality of two objects ignoring the member `skip` at the top level. */
bool tp_json_equal_except(const cJSON *a, const cJSON *b, const char *skip);

/* The object's metadata.name / metadata.namespace ("" when absent). */
const char *tp_meta_name(const cJSON *obj);
const char *tp_meta_namespace(const cJSON *obj);
/* metadata.labels[key], or NULL. */
const char *tp_meta_label(const cJSON *obj, const char *key);

/* ----------------------------------------------------------------- loading */

/* Members a caller has no use for, left out as YAML is loaded (JSON loads
 * whole): each mapping and sequence gets a context from open(), given its
 * parent's (TP_LOAD_SKIP_ROOT above a document's root), the key it is the
 * value of (NULL for a sequence's item) and whether it is a mapping; a
 * string member of a mapping is left out when drop() says so. Under
 * TP_LOAD_SKIP_NONE nothing is asked: it holds for everything below, and
 * for a node with an anchor or a merged (<<) mapping, so that aliases and
 * merges copy whole nodes. Keys left out still count as written (a second
 * one is a duplicate). */
#define TP_LOAD_SKIP_ROOT 0
#define TP_LOAD_SKIP_NONE (-1)
typedef struct tp_load_skip {
	int (*open)(int parent, const char *key, bool mapping);
	bool (*drop)(int ctx, const char *key);
} tp_load_skip;

typedef struct tp_load_limits {
	size_t max_doc_bytes;   /* one document (default 3 MiB) */
	size_t max_total_bytes; /* the whole input (default 64 MiB) */
	int max_depth;          /* nesting of mappings/sequences (default 100) */
	size_t max_aliases;     /* YAML alias uses, all documents (default 100) */
	size_t max_docs;        /* documents, List items counted (default 10000) */
	bool positions;         /* record each node's line and column (tp_docs_position) */
	bool json_only;         /* JSON or nothing (a body sent as application/json) */
	const tp_load_skip *skip; /* members left out (NULL: none) */
	/* Told how far the loader has read data, every 64 KiB, in each of its
	 * passes (the byte checks, then YAML's parser; not JSON's): bytes before
	 * upto are not read again in that pass, though a later pass, or an
	 * error's position, reads from the start again. A caller whose input is
	 * a private file mapping nothing writes may give those pages back
	 * (webhook/cli/crds.c). NULL: not told. */
	void (*read_to)(void *arg, const char *data, size_t upto);
	void *read_arg;
} tp_load_limits;

void tp_load_limits_default(tp_load_limits *l);

typedef struct tp_doc {
	cJSON *obj;    /* owned by the tp_docs until taken */
	int index;     /* 1-based document number in the input */
	int item;      /* 0, or 1-based item number when expanded from a kind: List */
	int line;      /* 1-based line where the document starts */
} tp_doc;

typedef struct tp_docs tp_docs;

typedef struct tp_load_error {
	int code;       /* TP_EPARSE, TP_ELIMIT, ... */
	int doc;        /* 1-based document number, 0 if not known */
	int line;       /* 1-based, 0 if not known */
	int column;     /* 1-based, 0 if not known */
	char msg[256];  /* what is wrong, without the file name */
} tp_load_error;

/* Parse YAML (one or many documents, "---") or JSON bytes into objects.
 * kind: List documents are expanded into their items. Empty documents are
 * skipped. On error returns a TP_E* code and fills err. */
int tp_load(const char *data, size_t len, const tp_load_limits *limits, tp_docs **out,
	    tp_load_error *err);
size_t tp_docs_count(const tp_docs *d);
const tp_doc *tp_docs_at(const tp_docs *d, size_t i);
/* Take ownership of document i's object (the slot becomes NULL). */
cJSON *tp_docs_take(tp_docs *d, size_t i);
void tp_docs_free(tp_docs *d);
/* Where node (of a document of d) was written: its key for a member, its
 * start for an array item or a root. Only when loaded with
 * tp_load_limits.positions; false otherwise or for nodes made later. */
bool tp_docs_position(const tp_docs *d, const cJSON *node, int *line, int *column);
/* The position of the field path names under root ("spec.trainer.numNodes",
 * "spec.replicatedJobs[0].name", "spec.labels[app]"): the deepest node of
 * the path that exists; false when not even root has a position. */
bool tp_docs_path_position(const tp_docs *d, const cJSON *root, const char *path, int *line,
			   int *column);
/* "<name>: document 2, line 14: <msg>" */
int tp_load_error_format(const tp_load_error *err, const char *name, tp_buf *out);

/* ------------------------------------------------------------------- store */

/* Kinds of object the library knows, from apiVersion + kind. */
typedef enum tp_kind {
	TP_KIND_UNKNOWN = 0,
	TP_KIND_TRAINJOB,                 /* trainer.kubeflow.org/v1alpha1 TrainJob */
	TP_KIND_TRAINING_RUNTIME,         /* trainer.kubeflow.org/v1alpha1 TrainingRuntime */
	TP_KIND_CLUSTER_TRAINING_RUNTIME, /* trainer.kubeflow.org/v1alpha1 ClusterTrainingRuntime */
	TP_KIND_OME_TRAINING_RUNTIME,     /* ome.io/v1beta1 TrainingRuntime */
	TP_KIND_OME_CLUSTER_TRAINING_RUNTIME,
	TP_KIND_JOBSET,                   /* jobset.x-k8s.io/v1alpha2 JobSet */
	TP_KIND_OUTDATED,                 /* kubeflow.org/v2alpha1 (pre-release guides) */
	TP_KIND_PRIORITY_CLASS,           /* scheduling.k8s.io/v1 PriorityClass (Volcano rule) */
	TP_KIND_CONFIGMAP,                /* v1 ConfigMap (a TrainJob's runtime snapshot) */
	TP_KIND_NAMESPACE,                /* v1 Namespace (its Pod Security labels) */
	TP_KIND_SERVICE_ACCOUNT,          /* v1 ServiceAccount (the Pods' serviceAccountName) */
	TP_KIND_LIMIT_RANGE,              /* v1 LimitRange (the LimitRanger plugin's limits) */
	TP_KIND_RESOURCE_QUOTA,           /* v1 ResourceQuota (what a namespace has left) */
	TP_KIND__COUNT
} tp_kind;

tp_kind tp_kind_of(const cJSON *obj);
/* "TrainJob", "ClusterTrainingRuntime", ... ("OME TrainingRuntime" for OME). */
const char *tp_kind_name(tp_kind k);
bool tp_kind_is_runtime(tp_kind k);
bool tp_kind_is_cluster_scoped(tp_kind k);

typedef struct tp_store tp_store;

int tp_store_new(tp_store **out);
void tp_store_free(tp_store *s);
/* The name suffix of a TrainJob's runtime snapshot ConfigMap
 * (<trainjob>-runtime-snapshot, kept by upstream's controller). */
#define TP_RUNTIME_SNAPSHOT_SUFFIX "-runtime-snapshot"

/* Add or replace by (kind, namespace, name). Takes ownership of obj, which must
 * have been allocated outside any arena. TP_EUNSUPPORTED for unknown kinds,
 * and for a ConfigMap that is not a runtime snapshot (the only ones a rule
 * reads). */
int tp_store_put(tp_store *s, cJSON *obj);
int tp_store_remove(tp_store *s, tp_kind k, const char *ns, const char *name);
/* Remove every object of kind k (a fresh list replaces them). */
void tp_store_clear_kind(tp_store *s, tp_kind k);

/* Readers bracket lookups with rdlock/unlock; the pointers returned by
 * tp_store_get stay valid until unlock. Writers (put/remove) lock inside. */
void tp_store_rdlock(const tp_store *s);
void tp_store_unlock(const tp_store *s);
/* ns is ignored for cluster-scoped kinds; empty means "default" for the
 * others (as the API server files them). NULL when absent. */
const cJSON *tp_store_get(const tp_store *s, tp_kind k, const char *ns, const char *name);
/* Namespaces (sorted) that hold an object of kind k named name; returns how
 * many there are, writes at most max of them. Strings valid until unlock. */
size_t tp_store_namespaces_of(const tp_store *s, tp_kind k, const char *name, const char **out,
			      size_t max);
size_t tp_store_count(const tp_store *s, tp_kind k);
/* The objects of a namespaced kind k in namespace ns (empty: "default"),
 * under the caller's read lock: returns how many there are, writes at most
 * max of them, ordered by name. Cost: the whole store. */
size_t tp_store_list(const tp_store *s, tp_kind k, const char *ns, const cJSON **out,
		     size_t max);
/* The runtime a TrainJob's runtimeRef names (kind defaults to
 * ClusterTrainingRuntime, apiGroup to trainer.kubeflow.org; a TrainingRuntime
 * is looked up in the TrainJob's namespace, which tp_store_get reads as
 * "default" when empty).
 * NULL when absent, or when the ref names another kind or group. */
const cJSON *tp_store_runtime_for(const tp_store *s, const cJSON *trainjob);
/* Bumped by every change; lets callers see that the store moved. */
uint64_t tp_store_generation(const tp_store *s);

/* A counted reference on one stored object, for callers that must not hold
 * the read lock while they work (a request that may wait on the network).
 * *obj stays valid, whatever writers do meanwhile, until the hold is
 * released. Takes and drops the read lock itself; NULL (and *obj NULL) when
 * absent. */
typedef struct tp_store_hold tp_store_hold;
tp_store_hold *tp_store_hold_get(const tp_store *s, tp_kind k, const char *ns,
				 const char *name, const cJSON **obj);
void tp_store_hold_release(tp_store_hold *h);

/* ---------------------------------------------------------------- decisions */

typedef enum tp_profile {
	TP_PROFILE_STRICT = 0, /* upstream + the rules the guides promise (default) */
	TP_PROFILE_KUBEFLOW,   /* exactly upstream Kubeflow Trainer */
} tp_profile;

int tp_profile_parse(const char *s, tp_profile *out);
const char *tp_profile_name(tp_profile p);

typedef enum tp_operation {
	TP_OP_CREATE = 0,
	TP_OP_UPDATE,
	TP_OP_DELETE,
	TP_OP_CONNECT,
} tp_operation;

int tp_operation_parse(const char *s, tp_operation *out);
const char *tp_operation_name(tp_operation op);

/*
 * Where decisions find the other objects they need (the runtime a TrainJob
 * names, the JobSet of a TrainJob, the TrainJob that owns a JobSet). Without
 * a lookup, tp_options.store is the whole truth: absent means not found.
 * With one (the server: its cache, then the API server), an answer may also
 * be "cannot tell", which the rules turn into an error that decides nothing
 * (tp_result_unavailable) instead of a denial.
 */
typedef struct tp_lookup {
	/* TP_OK and *out (valid until the caller's request ends), TP_ENOTFOUND
	 * when the cluster has no such object, or TP_EUNAVAILABLE with the
	 * reason in why when nobody could tell. */
	int (*get)(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
		   char *why, size_t whylen);
	/* Namespaces (sorted) holding an object of kind k named name, as
	 * tp_store_namespaces_of; strings valid until the request ends. May be
	 * NULL: no hint is given. */
	size_t (*namespaces_of)(void *ctx, tp_kind k, const char *name, const char **out,
				size_t max);
	void *ctx;
	/* Every object of a namespaced kind k in namespace ns (the
	 * LimitRanges, the ResourceQuotas of a TrainJob's namespace): TP_OK,
	 * *n how many there are and at most max of them in out (valid until
	 * the request ends), or TP_EUNAVAILABLE with why. May be NULL: this
	 * caller offers no lists, and what needs one is not checked. */
	int (*list)(void *ctx, tp_kind k, const char *ns, const cJSON **out, size_t max,
		    size_t *n, char *why, size_t whylen);
} tp_lookup;

/*
 * CustomResourceDefinitions (apiextensions.k8s.io/v1) whose schemas and
 * x-kubernetes-validations rules the library checks objects against, as the
 * API server does. Built once (each CRD compiled when added), then read by
 * any number of threads; counted references let a new set replace an old
 * one while requests still use it.
 */
typedef struct tp_crds tp_crds;

int tp_crds_new(tp_crds **out);
/* Compile one CRD (a parsed object, kept by nobody: it may be freed after).
 * TP_EINVAL with why when it is no CRD or its schema cannot be compiled. A
 * CRD for a group/kind already held replaces it. */
int tp_crds_add(tp_crds *c, const cJSON *crd, char *why, size_t whylen);
/* Served versions held ("TrainJob trainer.kubeflow.org/v1alpha1", ...). */
size_t tp_crds_count(const tp_crds *c);
/* Rules (x-kubernetes-validations) compiled, and of those how many use what
 * the CEL interpreter does not support (they warn when they apply). */
void tp_crds_rule_counts(const tp_crds *c, size_t *rules, size_t *unsupported);
/* For tp_load_limits.skip: the description strings of a CRD's schemas
 * (spec.versions[].schema.openAPIV3Schema and the schemas below it), which
 * tp_crds_add never reads; a property named description, and whatever a
 * default, enum or example holds, are kept. */
const tp_load_skip *tp_crds_load_skip(void);
/* Whether a CRD serves kind in group (any version). */
bool tp_crds_has_kind(const tp_crds *c, const char *group, const char *kind);
tp_crds *tp_crds_ref(tp_crds *c);
/* Drop a reference; the last frees. */
void tp_crds_unref(tp_crds *c);

typedef struct tp_options {
	tp_profile profile;
	bool no_schema;        /* skip the CRD schema / CEL layer */
	const tp_store *store; /* cluster state; NULL means empty. Caller holds rdlock
				* (unless lookup is set: then the lookup reads it). */
	const char *now;       /* RFC 3339 UTC "2026-08-21T10:15:30Z" for defaulting; NULL: clock */
	const tp_lookup *lookup; /* NULL: store only */
	const tp_crds *crds;   /* with a CRD for an object's kind, its schema and CEL
				* rules replace the built-in schema checks of that kind */
	const char *pod_security; /* "LEVEL[:VERSION]" (tp_psa_parse): the Pod Security
				   * level of every mode a namespace's labels leave unset,
				   * as the API server's PodSecurity defaults; NULL:
				   * privileged (the API server's own default) */
	int kubernetes_minor;  /* the cluster's Kubernetes, 1.<minor>: the fields its
				* Jobs and Pods know (tp_kube_minor); 0: the newest
				* supported, TP_KUBE_MINOR_NEWEST; TP_KUBE_MINOR_UNKNOWN */
} tp_options;

/* The Kubernetes releases the checks of the Jobs and Pods a TrainJob becomes
 * know: which fields each release's API server knows, and which it drops
 * behind a feature gate that is off by default (pod/fields_since.c). The
 * texts are v1.32's. */
#define TP_KUBE_MINOR_OLDEST 29
#define TP_KUBE_MINOR_NEWEST 32
/* The cluster's version could not be read (the server's GET /version
 * failed): the checks follow the newest supported release, and no field is
 * refused or warned about for the release that added it, since the cluster
 * may well have it. */
#define TP_KUBE_MINOR_UNKNOWN (-1)

/* The minor version opt's checks follow: opt->kubernetes_minor, or
 * TP_KUBE_MINOR_NEWEST when it is 0 or unknown (or opt is NULL). A cluster
 * outside the supported range keeps its own number: a field is judged by
 * the release that added it either way. */
int tp_kube_minor(const tp_options *opt);
/* "1.N" or "v1.N" (`--kubernetes-version`; a patch "1.N.P" is allowed):
 * *minor. TP_EINVAL with why ("use 1.29 to 1.32") when it is no such
 * version or N is outside TP_KUBE_MINOR_OLDEST..TP_KUBE_MINOR_NEWEST. */
int tp_kube_version_parse(const char *s, int *minor, char *why, size_t whylen);

/* One object through opt->lookup, else opt->store (TP_ENOTFOUND when absent).
 * ns is ignored for cluster-scoped kinds. why (may be NULL) says what went
 * wrong for TP_EUNAVAILABLE. */
int tp_lookup_get(const tp_options *opt, tp_kind k, const char *ns, const char *name,
		  const cJSON **out, char *why, size_t whylen);
/* Every object of a namespaced kind in ns through opt->lookup's list, else
 * opt->store (tp_store_list): *n how many, at most max of them in out.
 * TP_EUNAVAILABLE with why when nobody could tell; TP_EUNSUPPORTED when the
 * lookup offers no list. */
int tp_lookup_list(const tp_options *opt, tp_kind k, const char *ns, const cJSON **out,
		   size_t max, size_t *n, char *why, size_t whylen);
/* The error a lookup nobody could answer gives, and the mark: Internal error
 * at path, "<resource> \"<name>\" could not be looked up: <why>; the request
 * can be retried". */
int tp_result_lookup_failed(tp_result *r, const char *path, tp_kind k, const char *name,
			    const char *why);

/* Validate obj (old_obj on UPDATE, else NULL) according to its kind.
 * Fills res; returns TP_EUNSUPPORTED for kinds it does not know. */
int tp_validate(const tp_options *opt, tp_operation op, const cJSON *obj, const cJSON *old_obj,
		tp_result *res);
int tp_validate_runtime(const tp_options *opt, tp_operation op, const cJSON *obj,
			const cJSON *old_obj, tp_result *res);
int tp_validate_trainjob(const tp_options *opt, tp_operation op, const cJSON *obj,
			 const cJSON *old_obj, tp_result *res);
/* JobSet's own admission rules (jobset webhook ValidateCreate/Update). */
int tp_validate_jobset(const tp_options *opt, tp_operation op, const cJSON *obj,
		       const cJSON *old_obj, tp_result *res);

/* The API server's refusal of a TrainJob whose schema (its CRD in opt->crds,
 * else the built-in one; none with opt->no_schema) finds a list past its
 * maxItems: "Too many", which no webhook's validation gets to see. When so,
 * *refused is true and res gets the schema's findings in the API server's
 * order, as tp_validate_trainjob gives them; else res is left as it was.
 * The mutating route asks it first, so it never stamps a list past its
 * limit either. */
int tp_trainjob_too_many(const tp_options *opt, tp_operation op, const cJSON *obj,
			 const cJSON *old_obj, tp_result *res, bool *refused);

/* Upstream's TrainJob defaulting (runtimePatches[].time). *out is a new tree
 * (in the current arena, if any) with the defaults applied. */
int tp_default_trainjob(const tp_options *opt, tp_operation op, const cJSON *obj,
			const cJSON *old_obj, cJSON **out);

/* ---------------------------------------------------------------- pods
 *
 * What kube-apiserver will say of the Jobs and Pods a JobSet makes, before
 * they are made. tp_validate_trainjob and tp_validate_runtime run these in
 * the strict profile; the functions below are the same checks on their own.
 */

/* A batch/v1 JobTemplateSpec ({metadata, spec}) as a JobSet's replicated
 * job holds it, with JobSet's defaults (completionMode Indexed, Pod
 * restartPolicy OnFailure when empty): the Job spec's rules and core
 * validation of its Pod template. Errors go to res with kube-apiserver's
 * paths and texts for the Job ("spec.template.spec.containers[0].resources.
 * limits: Required value: Limit must be set for non overcommitable
 * resources"). */
int tp_pod_validate_job_template(const cJSON *job_template, tp_result *res);
/* Core validation of a PodTemplateSpec ({metadata, spec}); paths start with
 * prefix ("spec.template"; NULL or "" for none: ".spec.containers..."). */
int tp_pod_validate_template(const cJSON *pod_template, const char *prefix, tp_result *res);

/* Pod Security Admission (k8s.io/pod-security-admission): the levels of
 * the pod-security.kubernetes.io/{enforce,warn,audit}[-version] labels. */
typedef enum tp_psa_level {
	TP_PSA_PRIVILEGED = 0,
	TP_PSA_BASELINE,
	TP_PSA_RESTRICTED,
} tp_psa_level;

#define TP_PSA_LATEST (-1) /* the version "latest" */

typedef struct tp_psa_lv {
	tp_psa_level level;
	int minor; /* v1.<minor>, or TP_PSA_LATEST */
} tp_psa_lv;

typedef struct tp_psa_policy {
	tp_psa_lv enforce, audit, warn;
} tp_psa_policy;

/* The label key of the audit annotation a warn/audit violation adds. */
#define TP_PSA_AUDIT_ANNOTATION "pod-security-audit-violations"

/* "LEVEL" or "LEVEL:VERSION" (privileged|baseline|restricted; latest|v1.N),
 * as `--pod-security` takes it. TP_EINVAL with why when it is neither. */
int tp_psa_parse(const char *s, tp_psa_lv *out, char *why, size_t whylen);
/* "restricted:latest", "baseline:v1.30" (TP_ELIMIT when n is too small). */
int tp_psa_format(const tp_psa_lv *lv, char *buf, size_t n);
/* pod-security-admission's PolicyToEvaluate: labels (a Namespace's
 * metadata.labels; NULL: none) over defaults (NULL: privileged:latest for
 * all three modes). A label it cannot parse takes its fallback (enforce:
 * restricted; warn and audit: privileged; a version: latest) and its field
 * error ("metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value:
 * \"strict\": must be one of privileged, baseline, restricted") is added to
 * res (may be NULL) as a warning about namespace ns. */
int tp_psa_policy_of(const cJSON *labels, const tp_psa_policy *defaults, const char *ns,
		     tp_psa_policy *out, tp_result *res);
/* Every check of lv's level and version on a Pod template ({metadata,
 * spec}): *allowed, and when not, pod-security-admission's forbidden detail
 * ("allowPrivilegeEscalation != false (container \"x\" must set
 * securityContext.allowPrivilegeEscalation=false), ...") appended to
 * detail. */
int tp_psa_check_template(const tp_psa_lv *lv, const cJSON *pod_template, tp_buf *detail,
			  bool *allowed);

/* ---------------------------------------------------------------- expansion */

/* The keys the expansion writes into Secrets. The library never makes a key
 * (no randomness, no cryptography in policy/), so equal inputs give equal
 * bytes; the binary makes them (webhook/admission/sshkey.c, webhook/admission/curvekey.c). */

/* MPI: the SSH key pair of the <trainjob>-mpi-ssh-auth Secret. */
typedef struct tp_ssh_key {
	const char *private_pem; /* "-----BEGIN EC PRIVATE KEY-----..." */
	const char *public_line; /* "ecdsa-sha2-nistp521 AAAA..." */
} tp_ssh_key;

/* Flux: the CURVE25519 (X25519) pair of the <trainjob>-flux-curve Secret,
 * 32 raw bytes each. */
#define TP_CURVE_KEY_LEN 32
typedef struct tp_curve_key {
	unsigned char secret_key[TP_CURVE_KEY_LEN];
	unsigned char public_key[TP_CURVE_KEY_LEN];
} tp_curve_key;

/* A NULL member leaves its Secret out (everything else is built): the
 * mutating JobSet route wants the JobSet only. A tp_ssh_key with a member
 * missing is a mistake and refused. */
typedef struct tp_keys {
	const tp_ssh_key *ssh;
	const tp_curve_key *curve;
} tp_keys;

/* Expand a TrainJob into a v1 List of the
 * JobSet and its companion objects (MPI ConfigMap/Secret, Flux ConfigMap/
 * Secret, PodGroup), in the current arena if any. The runtime is the
 * TrainJob's runtime snapshot (ConfigMap <trainjob>-runtime-snapshot, as
 * upstream's controller keeps it) when opt can find one, else the runtime it
 * names, through opt->lookup or opt->store. keys: see tp_keys; NULL is no key
 * at all. Errors that stop the expansion (missing runtime, patches
 * that do not merge, an incomplete key) are added to res and TP_ENOTFOUND /
 * TP_EINVAL returned (TP_EUNAVAILABLE when the runtime could not be looked
 * up, res then unavailable; TP_EUNSUPPORTED when runtimeRef names a kind or
 * group this library does not expand). The build is always complete:
 * upstream's "do not touch a running JobSet" is the controller's business,
 * not the expansion's. */
int tp_expand(const tp_options *opt, const cJSON *trainjob, const tp_keys *keys,
	      cJSON **out_list, tp_result *res);
/* The same, with the runtime given instead of looked up. */
int tp_expand_with_runtime(const tp_options *opt, const cJSON *trainjob, const cJSON *runtime,
			   const tp_keys *keys, cJSON **out_list, tp_result *res);
/* existing (a JobSet the cluster holds) with the fields of built (from
 * tp_expand) laid over it by strategic merge: what built does not set is
 * kept, nothing is removed. *out is a new tree (current arena, if any). */
int tp_jobset_reconcile(const cJSON *existing, const cJSON *built, cJSON **out);

/* ---------------------------------------------------------------- JSON Patch */

/* RFC 6902: operations that turn from into to (add/remove/replace only).
 * *out is a JSON array, empty when the trees are equal. */
int tp_jsonpatch_diff(const cJSON *from, const cJSON *to, cJSON **out);
/* Apply ops to a copy of doc. TP_ECONFLICT when an operation does not apply. */
int tp_jsonpatch_apply(const cJSON *doc, const cJSON *ops, cJSON **out);
/* Escape one reference token for a JSON Pointer ("~" -> "~0", "/" -> "~1"). */
int tp_jsonpointer_escape(const char *token, tp_buf *out);

#ifdef __cplusplus
}
#endif
#endif /* TRAINPOLICY_H */
