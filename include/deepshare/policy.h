/* policy.h: the one ops struct every scheduling policy implements, the contract of each hook, and the
 * registry listing them.
 *
 * The contract, in the manner of Linux's sched_class: for each hook, who calls it, at what moment,
 * what it may call back into, and what it owns. Terms:
 * - driver: the simulator (src/sim) or the Slurm daemon (src/daemon). Only a driver calls the driver
 *   events of engine.h (ds_engine_arrive, _finish, _adopt, _move, _cancel_start, _hold, _withdraw,
 *   _schedule); a hook
 *   never does.
 * - mutators: the engine calls a policy may make from schedule: ds_engine_find_free, _start, _place,
 *   _preempt, _revoke, _set_class, _set_cpu_scale, _record, plus the read-only helpers (_elapsed,
 *   _node_fits, _gpus_fit, ...). Fields of ds_jstate_t a policy may write directly: keep_rate,
 *   finish_lag and (Lucid's reference accounting) queued; everything else only through the engine.
 * - One thread: hooks of one engine never run concurrently; the daemon serializes with its mutex.
 * - Held jobs (ds_engine_hold: the driver cannot start them yet) stay pending, but a policy passes over
 *   them: it may only start jobs for which ds_engine_startable holds, and reserves or preempts nothing
 *   on behalf of a held job (ds_engine_place refuses one; ds_engine_start asserts). A release marks the
 *   partition dirty; a policy that skips passes when nothing changed must look again when it skipped
 *   a held job.
 * - Job indices are the trace's; job state lives in e->js (engine-owned). The policy owns its state
 *   (init allocates it, fini frees it) and must not keep pointers into it past fini.
 *
 * Re-entrancy, the one case to design for: ds_engine_preempt (and ds_engine_revoke, which preempts)
 * calls enqueue synchronously. A policy preempting from schedule is therefore re-entered in enqueue
 * while schedule is on the stack, before ds_engine_preempt returns: enqueue must only file the job in
 * the policy's pending bookkeeping (no engine mutator), and schedule must not be iterating a structure
 * enqueue changes without expecting it (DeepShare classifies into scratch arrays first, then places). */
#ifndef DS_POLICY_H
#define DS_POLICY_H
/* layering (CMakeLists.txt): the engine layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_IO)
#error "deepshare/policy.h belongs to the engine layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include <stdio.h>

#include "deepshare/engine.h"
#include "deepshare/inputs.h"
#include "deepshare/strbuf.h"

/* One named counter a policy reports (e.g. "preempt_reclaim"). */
typedef struct ds_policy_stat {
    char name[40];
    double value;
} ds_policy_stat_t;

/* Declarative properties of a policy (ds_policy_ops_t.props): what it may do to running jobs and
 * how it accounts, so that tests and reports ask the policy instead of its name. */
enum {
    DS_POLICY_PREEMPTIVE = 1u << 0,  /* may stop running jobs (ds_engine_preempt / _revoke) */
    DS_POLICY_COLOCATES = 1u << 1,   /* may start a job on GPUs that hold another (k > 1) */
    DS_POLICY_CLASSES = 1u << 2,     /* classifies jobs G / BE (ds_engine_set_class) */
    DS_POLICY_EXACT_HOLD = 1u << 3,  /* a job alone on its GPUs holds them exactly for its work, its
                                        restart overheads and its finish lag: nothing more on purpose */
    DS_POLICY_NEEDS_ESTIMATES = 1u << 4, /* orders by the trace's duration estimates: a trace without
                                            them is refused */
    DS_POLICY_USES_PREDICTORS = 1u << 5, /* calls e->predictors (the report names the predictor) */
    DS_POLICY_USES_ESTIMATES = 1u << 6,  /* ranks by job->estimate, and by the runtime predictor where that
                                            is NAN (the report names where estimates came from) */
    DS_POLICY_PRODUCTION = 1u << 7,  /* a model of a scheduler operators deploy (Slurm, KAI, Kueue: SPEC 7.1),
                                        not a research baseline: the suite runs it pooled only and names the
                                        best such model in its verdict */
    DS_POLICY_TYPED = 1u << 8,     /* runs on a cluster of several GPU types: it places through the engine's
                                      type rules (ds_engine_find_free*) or its own; without it such a cluster is
                                      refused (docs/heterogeneous.md) */
};

typedef struct ds_policy_ops {
    const char *name;        /* "fifo", "sjf", ... */
    const char *summary;     /* one line for --help */
    unsigned props;          /* DS_POLICY_* flags */

    /* setup (optional). Caller: ds_engine_create, first, before nodes, GPUs and job state exist.
     * Lays out partitions with ds_engine_add_part and fills e->tenant_part for every tenant; without
     * it the engine lays out one partition per tenant (partitioned) or one pool (pooled). May read
     * e->trace and e->cfg; may call nothing else. config as for init. */
    int (*setup)(ds_engine_t *e, const void *config, ds_error_t *err);
    /* init (optional). Caller: ds_engine_create, once the cluster and job state exist and before any
     * event. Allocates the policy state into *state (owned by the policy until fini). config is the
     * caller's (from config_new; NULL means defaults): copy what is kept, the caller may reuse it for
     * another engine (the daemon rebuilds its engine with the same config). Returns DS_OK or an error
     * with err filled; the engine is then destroyed (fini is called when *state was set). */
    int (*init)(ds_engine_t *e, const void *config, void **state, ds_error_t *err);
    /* fini (optional). Caller: ds_engine_destroy. Frees state; the engine may be half torn down. */
    void (*fini)(void *state);

    /* enqueue (required). A job became pending in its partition: status DS_JS_PENDING, already counted
     * in parts[].npending and tenant_pending_gpus, partition marked dirty. Callers: ds_engine_arrive
     * (driver, first arrival); ds_engine_preempt (a preemption: from inside this policy's own schedule,
     * see re-entrancy above; the job's GPUs are already released); ds_engine_cancel_start when the
     * policy has no cancel_start. May read the engine; must not call mutators or start jobs: the
     * schedule pass that follows (the partition is dirty) places it. */
    void (*enqueue)(ds_engine_t *e, void *state, int32_t job, int64_t now);
    /* adopt (optional). Caller: ds_engine_adopt (driver: deepshared rebuilding from Slurm). The job is
     * already running on the driver's GPUs with its class set, and was never pending here: the policy
     * adds it to its running bookkeeping. Its co-resident may be adopted later. No mutators. */
    void (*adopt)(ds_engine_t *e, void *state, int32_t job, int64_t now);
    /* cancel_start (optional). Caller: ds_engine_cancel_start (driver, outside schedule): a start this
     * policy made could not be carried out (Slurm refused it or cannot pin the GPUs). The job is pending
     * again as if never started (GPUs released, no preemption counted); the policy moves it back from
     * running to pending bookkeeping and must not count a preemption. Without it, enqueue is called.
     * No mutators. */
    void (*cancel_start)(ds_engine_t *e, void *state, int32_t job, int64_t now);
    /* withdraw (required of every registered policy; tests/test_invariants.c withdraws pending jobs under each).
     * Caller: ds_engine_withdraw (driver, outside schedule): a pending job leaves, because its owner
     * cancelled it, held it or moved it to another partition. The engine has already taken it out of its
     * counts (status DS_JS_FUTURE, not held, out of parts[].npending and tenant_pending_gpus; its partition
     * is dirty). The policy takes it out of its pending bookkeeping (queues, reservations it no longer needs,
     * per-queue demand counters) and forgets what it decided at arrival that a later arrival decides again
     * (a class fixed at submit), so that the job may arrive again (ds_engine_arrive) as if new. It leaves
     * every other job's state and every tenant's signal (DeepShare's smoothed QAD) as they were: nothing is
     * rebuilt, recomputed or smoothed here. No mutators. */
    void (*withdraw)(ds_engine_t *e, void *state, int32_t job, int64_t now);
    /* on_finish (optional). Caller: ds_engine_finish (driver). The job is DS_JS_DONE, its GPUs are
     * released and its partition is dirty. Bookkeeping only: no mutators (the next schedule uses the
     * freed GPUs). */
    void (*on_finish)(ds_engine_t *e, void *state, int32_t job, int64_t now);
    /* schedule (required). Caller: ds_engine_schedule (driver), once per dirty partition, or for every
     * partition with timer = 1 at a periodic wake-up (next_timer). The one hook that decides: it may call
     * every mutator, which records the
     * decisions the driver then applies. It is re-entered through enqueue by its own preemptions. On
     * return the engine invariants (ds_engine_check) and the policy's own (check) must hold. */
    void (*schedule)(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer);
    /* next_timer (optional). Caller: the driver, after each batch of events. Next time > now the policy
     * wants a timer pass, DS_TIME_NEVER if none. Read-only (const). */
    int64_t (*next_timer)(const ds_engine_t *e, const void *state, int64_t now);

    /* Parameters (all optional, no engine involved). config_new returns a config with the defaults,
     * owned by the caller, who frees it with config_free after the last engine that used it. config_set
     * sets one by name ("rho-min", "0.7") from flags or a config file; it returns DS_ENOTFOUND for a
     * name it does not know, DS_EINVAL with err filled for a bad value. config_help writes
     * "--name value  description" lines for --help. */
    void *(*config_new)(void);
    void (*config_free)(void *config);
    int (*config_set)(void *config, const char *key, const char *value, ds_error_t *err);
    void (*config_help)(FILE *f);
    /* Inputs (optional): tables the policy reads besides the trace, each a parameter that names a file
     * (deepshare/inputs.h), ended by a NULL key. The policy never opens them: a driver sets such a parameter
     * with ds_policy_config_set (deepshare/policy_config.h), which reads the file through the io layer and
     * hands the parsed table to config_input (the policy's from then on; no engine involved). config_help
     * lists them like the other parameters. */
    const ds_policy_input_t *inputs;
    int (*config_input)(void *config, const char *key, void *table, ds_error_t *err);

    /* check (optional). Caller: drivers that check invariants after a pass (the simulator with
     * check_invariants, tests). Policy-specific invariants; returns 0, or nonzero with msg filled.
     * Read-only. */
    int (*check)(const ds_engine_t *e, const void *state, char *msg, size_t n);
    /* stats (optional). Caller: the report, after a run, and deepshared's /metrics. Named counters of
     * the run so far; returns how many were written, at most max. Read-only. */
    int (*stats)(const ds_engine_t *e, const void *state, ds_policy_stat_t *out, int max);
    /* pending_order (optional). Caller: ds_engine_pending_order (deepshared's status page). Writes the
     * pending jobs, at most max, in the order the next schedule pass would consider them, and returns how
     * many are pending. Without it the engine lists them in arrival order. Read-only. */
    int32_t (*pending_order)(const ds_engine_t *e, const void *state, int32_t *out, int32_t max);
    /* explain (required of every registered policy; tests/test_policies.c checks it). Callers: the drivers,
     * to tell a person what the policy makes of one job now: deepshared's /explain and its status page
     * (deepshare explain), the simulator's --explain JOB. Appends to out lines of the form
     * "  topic: text\n" (two spaces, a short topic such as order, class, quota, fit, colocation,
     * preemption), each one fact, read from the policy's own state and configuration -- the parameters it
     * really applies, never a default the driver assumes: for a pending job why it has not started (its
     * place in the policy's order, the rule that holds it back, what would let it start), for a running
     * one how it runs (its class, its partner, what could stop it). The driver writes the first line
     * (the job, its tenant, its status) and its own facts (node names, Slurm's refusals, holds) after the
     * policy's; a policy names other jobs by their trace id (e->trace->jobs[j].id), which is Slurm's job
     * id under deepshared. A job that is not pending or running may get no line. May call the read-only
     * engine helpers and ds_explain_fit; must not call mutators, change its state or read a clock, so
     * that explaining never changes a schedule. Read-only (const). */
    void (*explain)(const ds_engine_t *e, const void *state, int32_t job, int64_t now, ds_buf_t *out);
} ds_policy_ops_t;

/* Lines of an explanation every policy may use (src/core/explain.c): whether a pending job's GPUs are free
 * now ("fit: ..." or "no fit: ..."; for a held job "held: ..."), as ds_engine_find_free would find them in
 * its partition. Returns 1 when it could be placed on free GPUs now. */
int ds_explain_fit(const ds_engine_t *e, int32_t job, ds_buf_t *out);

const ds_policy_ops_t *ds_policy_find(const char *name);
/* NULL-terminated list of all registered policies, in display order. */
const ds_policy_ops_t *const *ds_policy_list(void);

#endif
