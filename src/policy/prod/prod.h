/* prod.h: pieces the production-scheduler models (KAI, Kueue) share: ordered job lists with lazy removal
 * and deferred inserts, the priority class a trace job gets at submit, and a small indexed heap of queues. */
#ifndef DS_POLICY_PROD_H
#define DS_POLICY_PROD_H

#include "deepshare/policy.h"

/* ---- ordered job lists ----
 * A family of lists over one job index space: each job is in at most one list of the family, ordered by
 * (key, job). Removal is lazy (a stamp per job; a list keeps dead entries until it is compacted). While the
 * family is frozen (a scheduling pass walks its lists by index), inserts are queued and applied by
 * pq_thaw, so that a walk never sees entries move under it (preemptions re-enter jobs from inside a
 * pass). */
typedef struct pq_ent {
    int64_t key;
    int32_t job;
    uint32_t stamp;
} pq_ent_t;

typedef struct pq_list {
    pq_ent_t *a;
    int32_t n, cap;
    int32_t live;  /* live entries, counting queued inserts */
    int32_t head;  /* every entry before head is dead */
    uint32_t epoch; /* changes whenever entries move (compaction, an insert before the end): cursors held
                       across inserts start again when it does */
} pq_list_t;

typedef struct pq_fam {
    pq_list_t *l;
    int32_t nl;
    uint32_t *stamp;
    int32_t *where;   /* list of each job, -1 none */
    int64_t *key;     /* key of each job's live entry */
    int frozen;
    pq_ent_t *defer;  /* queued inserts: key, job, stamp; list in where[] at thaw */
    int32_t *defer_list;
    int32_t ndefer, capdefer;
} pq_fam_t;

void pq_fam_init(pq_fam_t *f, int32_t nlists, int32_t njobs);
void pq_fam_free(pq_fam_t *f);
/* Files job in list with key (leaving the list it was in). */
void pq_put(pq_fam_t *f, int32_t list, int32_t job, int64_t key);
/* Takes job out of its list, if any. */
void pq_drop(pq_fam_t *f, int32_t job);
static inline int pq_live(const pq_fam_t *f, const pq_ent_t *x) { return x->stamp == f->stamp[x->job]; }
static inline int pq_in(const pq_fam_t *f, int32_t job) { return f->where[job] >= 0; }
/* Index of the first live entry of a list at or after i, or the list's n. */
int32_t pq_next(pq_fam_t *f, int32_t list, int32_t i);
/* The same walking down from i (inclusive); -1 when none. */
int32_t pq_prev(const pq_fam_t *f, int32_t list, int32_t i);
void pq_freeze(pq_fam_t *f);
void pq_thaw(pq_fam_t *f);

/* ---- priority class at submit ----
 * The production systems fix a job's class when it is submitted (a Kubernetes PriorityClass, a Kueue
 * WorkloadPriorityClass); nothing promotes a running job later. How an operator maps trace jobs to the
 * two classes (docs/peers.md, "Priority classes"):
 *   quota (default): a job submitted as G, or submitted without a class while its tenant's G-class jobs
 *                    not yet finished, with it, fit in the tenant's quota, is G; the rest is BE;
 *   all-g / all-be:  every job without a class is G / BE.
 * A job submitted as BE is BE, and a job larger than its tenant's quota is BE under every mapping (as G it
 * could never run: both systems keep G-class work inside the quota). */
enum { PQ_CLASSES_QUOTA = 0, PQ_CLASSES_ALL_G, PQ_CLASSES_ALL_BE };
int pq_class_at_submit(const ds_engine_t *e, int mode, int64_t g_demand, int32_t job);
/* Parses "quota", "all-g", "all-be"; DS_EINVAL with err filled otherwise. */
int pq_parse_classes(const char *key, const char *value, int *out, ds_error_t *err);
const char *pq_classes_name(int mode);

/* ---- tenants by partition ----
 * Every tenant's queue lives in its tenant's partition (one cohort each): tenants[off[p] .. off[p + 1]) are
 * partition p's, in tenant order, and local[t] (when not NULL) is tenant t's index among them. The caller
 * frees tenants and off. */
void pq_part_tenants(const ds_engine_t *e, int32_t **tenants, int32_t **off, int32_t *local);

/* ---- option parsing shared by the models' config_set ---- */
int pq_parse_double(const char *key, const char *value, double lo, double hi, double *out, ds_error_t *err);
/* Seconds: an integer with an optional unit s, m, h ("90", "10m"). */
int pq_parse_seconds(const char *key, const char *value, int64_t *out, ds_error_t *err);

/* ---- an indexed binary heap of small integers (queues) under a caller's order ---- */
typedef int (*pq_less_fn)(const void *ctx, int32_t a, int32_t b);
typedef struct pq_heap {
    int32_t *a, *pos;
    int32_t n, cap;
    pq_less_fn less;
    const void *ctx;
} pq_heap_t;
void pq_heap_init(pq_heap_t *h, int32_t cap, pq_less_fn less, const void *ctx);
void pq_heap_free(pq_heap_t *h);
void pq_heap_clear(pq_heap_t *h);
void pq_heap_push(pq_heap_t *h, int32_t x);
int32_t pq_heap_top(const pq_heap_t *h); /* -1 when empty */
void pq_heap_pop(pq_heap_t *h);
/* Takes x out, wherever it is (nothing when it is not in). */
void pq_heap_remove(pq_heap_t *h, int32_t x);
/* x's order changed: restore the heap. */
void pq_heap_fix(pq_heap_t *h, int32_t x);

/* ---- what could still be placed ----
 * Bounds from the partition's free GPUs (the most on one node, the wholly free nodes) and the placement
 * failures since the last start: with the free GPUs and CPUs unchanged, a job of g GPUs and c CPUs on one
 * node fails wherever one of at most g GPUs and at most c CPUs failed. Memory is not in the memo (it is
 * off on nodes that declare memory). Refresh after every start. */
typedef struct pq_fit {
    int32_t mf, nfull, gpn, memo;
    int32_t failc[DS_MAX_GPUS_PER_NODE + 1];
} pq_fit_t;
void pq_fit_refresh(pq_fit_t *f, const ds_engine_t *e, int32_t part);
/* 0 when a job of g GPUs and c CPUs certainly cannot be placed now */
int pq_fit_may(const pq_fit_t *f, int32_t g, int32_t c);
void pq_fit_failed(pq_fit_t *f, int32_t g, int32_t c);

/* ---- size buckets for per-queue histograms of pending jobs ---- */
#define PQ_HB 66 /* GPU counts 0..64 individually, above 64 in one bucket */
static inline int pq_hb(int32_t g) { return g > 64 ? 65 : g; }

#endif
