/* lucid.c: Lucid (ASPLOS'23) with the semantics of its reference simulator: estimated-GPU-time
 * priorities without blocking, a profiling partition that finishes short jobs, packing of compatible
 * jobs onto the GPUs of a running partner, and a sharing switch driven by predicted throughput.
 * Jobs without an estimate are ranked by the runtime predictor's, made when they reach the queue. */
#include "deepshare/lucid.h"
#include "deepshare/policy.h"
#include "deepshare/predictor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TEMP_NAME 9999 /* the reference's name for a node lent back and forth */

typedef struct ilist {
    int32_t *a;
    int32_t n, cap;
} ilist_t;

static void il_push(ilist_t *l, int32_t v)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->a = ds_xrealloc(l->a, (size_t)l->cap * sizeof *l->a);
    }
    l->a[l->n++] = v;
}

static void il_remove(ilist_t *l, int32_t v)
{
    for (int32_t i = 0; i < l->n; i++)
        if (l->a[i] == v) {
            memmove(&l->a[i], &l->a[i + 1], (size_t)(l->n - i - 1) * sizeof *l->a);
            l->n--;
            return;
        }
}

typedef struct lucid {
    ds_lucid_config_t cfg;      /* copy of the parameters (tables borrowed from the config object) */
    ds_lucid_prof_t prof;
    int8_t *score;
    double *prio;
    int32_t prof_part, scale_part, nparts;
    int scaling;
    ilist_t *pend;              /* per partition: pending, by (priority, arrival) */
    ilist_t *run;               /* per partition and GPU count up to a node: the running jobs that may
                                   host a partner, in start order (the partner search order) */
    int64_t *sseq, seq;         /* per job: start order */
    uint8_t *changed;           /* per partition: something happened since its last pass */
    int8_t *last_flag;          /* per partition: sharing switch at its last pass */
    int32_t *prof_order;        /* jobs that finish in the profiler, by profiling start */
    int32_t nprof_order, prof_cursor;
    int64_t *flag_time;         /* the switch takes value flag_val[i] from flag_time[i] on */
    uint8_t *flag_val;
    int32_t nflag;
    int64_t *wake;              /* every instant the policy must run at, ascending, unique */
    int32_t nwake;
    int32_t echo_cursor;
    /* the scaling tenant's nodes (local indices): names, on/off, placement order */
    int32_t *name;
    uint8_t *offline;
    ilist_t order;
    int32_t temp_node;          /* local node named TEMP_NAME, -1 none */
    int has_temp;
    int32_t *gbuf, *nbuf;
    /* Lucid's own view of sharing: excl = may host a partner; host/guest link a packed pair */
    uint8_t *excl;
    int32_t *host, *guest;
    int32_t *nexcl;             /* per partition and GPU count (0..gpus_per_node): running jobs with excl */
    int32_t gpn;
    /* counters */
    int64_t pairs, guests_first, echo_removed, echo_failed, echo_added, echo_grow_skipped, prof_misplaced;
} lucid_t;

static const ds_lucid_config_t *config_or_default(const void *config, ds_lucid_config_t *tmp)
{
    if (config) return config;
    void *d = ds_lucid_config_new();
    *tmp = *(ds_lucid_config_t *)d;
    free(d); /* defaults own no tables */
    return tmp;
}

/* ---- partition layout ---- */

/* Tenant that lends the k-th profiler node: the named lender when it exists and can spare a node,
 * else the tenant with the most nodes left. */
static int32_t pick_lender(const ds_trace_t *t, const char *list, int32_t k, const int32_t *nodes)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    int32_t i = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
        if (i != k) continue;
        int32_t ten = ds_trace_find_tenant(t, tok);
        if (ten >= 0 && nodes[ten] > 1) return ten;
        break;
    }
    int32_t best = -1;
    for (int32_t ten = 0; ten < t->ntenants; ten++)
        if (nodes[ten] > 1 && (best < 0 || nodes[ten] > nodes[best])) best = ten;
    return best;
}

static int scale_tenant(const ds_trace_t *t, const ds_lucid_config_t *c)
{
    /* the profiler's scaling borrows a whole node of one tenant's: on a typed cluster it stays off */
    if (!c->profiler || !strcmp(c->prof_scale_tenant, "none") || t->ngtypes > 1) return -1;
    return ds_trace_find_tenant(t, c->prof_scale_tenant);
}

/* A typed cluster (docs/heterogeneous.md): each tenant's quota per type in whole nodes of that type, and
 * the profiler's nodes of the first type, lent as on a cluster of one kind of node. */
static int lucid_setup_typed(ds_engine_t *e, const ds_lucid_config_t *c, ds_error_t *err)
{
    const ds_trace_t *t = e->trace;
    int32_t nt = t->ntenants, nty = e->ntypes;
    int32_t *nodes = ds_xmalloc((size_t)nt * (size_t)nty * sizeof *nodes), *n0 = ds_xmalloc((size_t)nt * sizeof *n0);
    int32_t pool[DS_MAX_GPU_TYPES] = {0};
    for (int32_t i = 0; i < nt; i++)
        for (int32_t ty = 0; ty < nty; ty++) {
            nodes[i * nty + ty] = ds_engine_quota_nodes(e, i, ty);
            pool[ty] += nodes[i * nty + ty];
        }
    for (int32_t ty = 0; ty < nty; ty++)
        if (t->gtypes[ty].nodes > 0) pool[ty] = t->gtypes[ty].nodes;
    int rc = DS_OK;
    if (c->profiler) {
        if (e->cfg.mode == DS_MODE_POOLED) {
            if (pool[0] <= c->prof_nodes) {
                ds_error_set(err, NULL, 0, "lucid-prof-nodes", "the cluster has %d nodes of %s: none left after lending %d "
                             "to the profiler", pool[0], t->gtypes[0].name, c->prof_nodes);
                rc = DS_EINVAL;
            }
            pool[0] -= c->prof_nodes;
        } else {
            for (int32_t i = 0; i < nt; i++) n0[i] = nodes[i * nty];
            for (int32_t k = 0; k < c->prof_nodes && !rc; k++) {
                int32_t ten = pick_lender(t, c->prof_lenders, k, n0);
                if (ten < 0) {
                    ds_error_set(err, NULL, 0, "lucid-prof-nodes", "no tenant can lend a %d-th node of %s to the profiler",
                                 k + 1, t->gtypes[0].name);
                    rc = DS_EINVAL;
                    break;
                }
                n0[ten]--, nodes[ten * nty]--;
            }
        }
    }
    if (!rc) {
        if (e->cfg.mode == DS_MODE_POOLED) {
            int32_t p = ds_engine_add_part_typed(e, "pool", pool);
            for (int32_t i = 0; i < nt; i++) e->tenant_part[i] = p;
        } else {
            for (int32_t i = 0; i < nt; i++) e->tenant_part[i] = ds_engine_add_part_typed(e, t->tenants[i].name, &nodes[i * nty]);
        }
        if (c->profiler) {
            int32_t pn[DS_MAX_GPU_TYPES] = {c->prof_nodes};
            int32_t p = ds_engine_add_part_typed(e, "lucid-profiler", pn);
            e->parts[p].no_util = 1;
        }
    }
    free(nodes);
    free(n0);
    return rc;
}

static int lucid_setup(ds_engine_t *e, const void *config, ds_error_t *err)
{
    ds_lucid_config_t tmp;
    const ds_lucid_config_t *c = config_or_default(config, &tmp);
    const ds_trace_t *t = e->trace;
    if (t->ngtypes > 1) return lucid_setup_typed(e, c, err);
    int32_t gpn = e->cfg.gpus_per_node, nt = t->ntenants;
    int32_t *nodes = ds_xmalloc((size_t)nt * sizeof *nodes);
    int64_t total = 0;
    for (int32_t i = 0; i < nt; i++) nodes[i] = (t->tenants[i].quota_gpus + gpn - 1) / gpn, total += nodes[i];
    int32_t lent = 0;
    if (c->profiler) {
        if (e->cfg.mode == DS_MODE_POOLED) {
            if (total <= c->prof_nodes) {
                ds_error_set(err, NULL, 0, "lucid-prof-nodes", "the cluster has %lld nodes: none left after lending %d to the profiler",
                             (long long)total, c->prof_nodes);
                free(nodes);
                return DS_EINVAL;
            }
            lent = c->prof_nodes;
        } else {
            for (int32_t k = 0; k < c->prof_nodes; k++) {
                int32_t ten = pick_lender(t, c->prof_lenders, k, nodes);
                if (ten < 0) {
                    ds_error_set(err, NULL, 0, "lucid-prof-nodes", "no tenant can lend a %d-th node to the profiler", k + 1);
                    free(nodes);
                    return DS_EINVAL;
                }
                nodes[ten]--;
                lent++;
            }
        }
    }
    if (e->cfg.mode == DS_MODE_POOLED) {
        int32_t p = ds_engine_add_part(e, "pool", (int32_t)(total - lent));
        for (int32_t i = 0; i < nt; i++) e->tenant_part[i] = p;
    } else {
        for (int32_t i = 0; i < nt; i++) e->tenant_part[i] = ds_engine_add_part(e, t->tenants[i].name, nodes[i]);
    }
    if (c->profiler) {
        /* one more slot for the node the profiler borrows when it scales up */
        int32_t p = ds_engine_add_part(e, "lucid-profiler", c->prof_nodes + (scale_tenant(t, c) >= 0));
        e->parts[p].no_util = 1; /* the reference's utilization leaves the profiler out */
    }
    free(nodes);
    return DS_OK;
}

/* ---- the sharing switch ---- */

static int sharing_at(const lucid_t *s, int64_t t)
{
    if (s->nflag == 0) return 1;
    int32_t lo = 0, hi = s->nflag; /* last change at or before t */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (s->flag_time[mid] <= t) lo = mid + 1;
        else hi = mid;
    }
    return s->flag_val[lo > 0 ? lo - 1 : 0];
}

/* The switch is evaluated every pas_period seconds from the averaged prediction after that instant;
 * past the prediction's end sharing stays on (the reference's fallback). */
static void build_flags(lucid_t *s, const ds_trace_t *t)
{
    const ds_lucid_config_t *c = &s->cfg;
    if (c->series.n == 0) return;
    int64_t per = c->pas_period, first = t->jobs[0].submit;
    int64_t t0 = first - (((first % per) + per) % per);
    int64_t tend = DS_MAX(ds_lucid_series_time(c, c->series.n - 1), t->jobs[t->njobs - 1].submit) + per;
    int32_t cap = 0;
    int last = -1;
    for (int64_t T = t0; T <= tend; T += per) {
        int v = ds_lucid_future_mean(c, T, 0, INFINITY) > c->pas_threshold;
        if (v == last) continue;
        if (s->nflag == cap) {
            cap = cap ? cap * 2 : 256;
            s->flag_time = ds_xrealloc(s->flag_time, (size_t)cap * sizeof *s->flag_time);
            s->flag_val = ds_xrealloc(s->flag_val, (size_t)cap);
        }
        s->flag_time[s->nflag] = T;
        s->flag_val[s->nflag++] = (uint8_t)v;
        last = v;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static _Thread_local const ds_lucid_prof_t *sort_prof;
static int cmp_prof_start(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int64_t sx = sort_prof->start[x], sy = sort_prof->start[y];
    if (sx != sy) return sx < sy ? -1 : 1;
    return (x > y) - (x < y);
}

/* ---- life cycle ---- */

static void lucid_fini(void *state);

static int lucid_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    ds_lucid_config_t tmp;
    const ds_lucid_config_t *c = config_or_default(config, &tmp);
    const ds_trace_t *t = e->trace;
    int32_t nj = t->njobs, n1 = nj ? nj : 1, np = e->nparts;
    lucid_t *s = ds_xcalloc(1, sizeof *s);
    s->cfg = *c;
    s->prof_part = c->profiler ? np - 1 : -1;
    int32_t st = scale_tenant(t, c);
    s->scaling = st >= 0;
    s->scale_part = s->scaling ? e->tenant_part[st] : -1;
    s->temp_node = -1;
    /* typed clusters: the profiler's nodes are of the first type; a job runs there at its speed on it, and one
     * that asks for another type is not profiled */
    int64_t *wall = NULL;
    if (e->ntypes > 1) {
        wall = ds_xmalloc((size_t)n1 * sizeof *wall);
        for (int32_t j = 0; j < nj; j++)
            wall[j] = !ds_engine_type_ok(e, j, 0) ? -1
                                                   : (int64_t)ceil((double)t->jobs[j].duration / ds_engine_speed(e, j, 0) - 1e-9);
    }
    ds_lucid_profile(&s->prof, t, c, ds_engine_type_gpus_per_node(e, 0), s->scaling, wall);
    free(wall);
    s->score = ds_xmalloc((size_t)n1);
    ds_lucid_scores(c, t, s->score);
    s->prio = ds_xmalloc((size_t)n1 * sizeof *s->prio);
    s->excl = ds_xcalloc((size_t)n1, 1);
    s->host = ds_xmalloc((size_t)n1 * sizeof *s->host);
    s->guest = ds_xmalloc((size_t)n1 * sizeof *s->guest);
    for (int32_t j = 0; j < nj; j++) s->host[j] = s->guest[j] = -1;
    for (int32_t j = 0; j < nj; j++) {
        const ds_job_t *job = &t->jobs[j];
        if (s->prof.done[j]) {
            /* it never reaches its tenant's queue: it runs to completion in the profiler */
            e->js[j].part = s->prof_part;
            s->prio[j] = 0;
            continue;
        }
        if (isnan(job->estimate) && e->predictors && e->predictors->runtime) {
            s->prio[j] = NAN; /* predicted at enqueue, from what has finished by then */
            e->js[j].finish_lag = (uint8_t)(c->reference_timing ? 1 : 0);
            continue;
        }
        if (isnan(job->estimate)) {
            ds_error_set(err, t->source, job->line, "estimate",
                         "lucid needs a duration estimate for every job; job %lld has none (give --estimates FILE)",
                         (long long)job->id);
            *state = s;
            lucid_fini(s);
            *state = NULL;
            return DS_EINVAL;
        }
        s->prio[j] = job->estimate * job->gpus;
        e->js[j].finish_lag = (uint8_t)(c->reference_timing ? 1 : 0);
    }
    s->nparts = np;
    s->gpn = e->cfg.gpus_per_node;
    s->nexcl = ds_xcalloc((size_t)np * (size_t)(s->gpn + 1), sizeof *s->nexcl);
    s->sseq = ds_xcalloc((size_t)n1, sizeof *s->sseq);
    s->pend = ds_xcalloc((size_t)np, sizeof *s->pend);
    s->run = ds_xcalloc((size_t)np * (size_t)(s->gpn + 1), sizeof *s->run);
    s->changed = ds_xcalloc((size_t)np, 1);
    s->last_flag = ds_xmalloc((size_t)np);
    memset(s->last_flag, -1, (size_t)np);
    s->prof_order = ds_xmalloc((size_t)n1 * sizeof *s->prof_order);
    for (int32_t j = 0; j < nj; j++)
        if (s->prof.done[j]) s->prof_order[s->nprof_order++] = j;
    sort_prof = &s->prof;
    qsort(s->prof_order, (size_t)s->nprof_order, sizeof *s->prof_order, cmp_prof_start);
    build_flags(s, t);
    /* wake-ups: profiler starts, switch changes, scaling echoes (a node lent back is used a second later) */
    int64_t nw = s->nprof_order + s->nflag + 2 * (int64_t)s->prof.nscale;
    s->wake = ds_xmalloc((size_t)(nw ? nw : 1) * sizeof *s->wake);
    int64_t w = 0;
    for (int32_t i = 0; i < s->nprof_order; i++) s->wake[w++] = s->prof.start[s->prof_order[i]];
    for (int32_t i = 0; i < s->nflag; i++) s->wake[w++] = s->flag_time[i];
    for (int32_t i = 0; i < s->prof.nscale; i++) {
        s->wake[w++] = s->prof.scale_time[i];
        if (s->prof.scale_delta[i] < 0) s->wake[w++] = s->prof.scale_time[i] + 1;
    }
    qsort(s->wake, (size_t)w, sizeof *s->wake, cmp_i64);
    int64_t u = 0;
    for (int64_t i = 0; i < w; i++)
        if (u == 0 || s->wake[i] != s->wake[u - 1]) s->wake[u++] = s->wake[i];
    s->nwake = (int32_t)u;
    if (s->scaling) {
        int32_t nn = e->parts[s->scale_part].nnodes;
        s->name = ds_xmalloc((size_t)nn * sizeof *s->name);
        s->offline = ds_xcalloc((size_t)nn, 1);
        for (int32_t k = 0; k < nn; k++) s->name[k] = k, il_push(&s->order, k);
    }
    int32_t maxn = 0;
    for (int32_t p = 0; p < np; p++) maxn = DS_MAX(maxn, e->parts[p].nnodes);
    s->nbuf = ds_xmalloc((size_t)(maxn + 1) * sizeof *s->nbuf);
    int32_t maxg = 1;
    for (int32_t j = 0; j < nj; j++) maxg = DS_MAX(maxg, t->jobs[j].gpus);
    s->gbuf = ds_xmalloc((size_t)maxg * sizeof *s->gbuf);
    *state = s;
    return DS_OK;
}

static void lucid_fini(void *state)
{
    lucid_t *s = state;
    if (!s) return;
    ds_lucid_prof_free(&s->prof);
    free(s->score);
    free(s->prio);
    free(s->excl);
    free(s->nexcl);
    free(s->sseq);
    free(s->host);
    free(s->guest);
    for (int32_t p = 0; p < s->nparts; p++) {
        if (s->pend) free(s->pend[p].a);
        for (int32_t g = 0; s->run && g <= s->gpn; g++) free(s->run[p * (s->gpn + 1) + g].a);
    }
    free(s->pend);
    free(s->run);
    free(s->changed);
    free(s->last_flag);
    free(s->prof_order);
    free(s->flag_time);
    free(s->flag_val);
    free(s->wake);
    free(s->name);
    free(s->offline);
    free(s->order.a);
    free(s->gbuf);
    free(s->nbuf);
    free(s);
}

/* ---- placement ---- */

static int node_offline(const lucid_t *s, const ds_engine_t *e, int32_t part, int32_t node)
{
    return part == s->scale_part && s->offline[node - e->parts[part].node0];
}

/* Local node k of a partition in placement order (the scaling tenant's order changes as nodes come back). */
static int32_t nth_node(const lucid_t *s, const ds_engine_t *e, int32_t part, int32_t k)
{
    return e->parts[part].node0 + (part == s->scale_part ? s->order.a[k] : k);
}

static int32_t nodes_in_order(const lucid_t *s, const ds_engine_t *e, int32_t part)
{
    return part == s->scale_part ? s->order.n : e->parts[part].nnodes;
}

/* Consolidated placement as the reference's: up to a node, the fullest node that fits (ties: placement
 * order); beyond, whole free nodes then the remainder on the next node by free GPUs. Returns 1 when
 * placed; 0 when no node has the GPUs; -1 when some node had them but not the CPUs or memory. */
/* The same on a typed cluster, type-blind as published: up to a node of some type the job may use, the fullest
 * such node; beyond, whole free nodes of the first type (cluster order) that has them, then its remainder
 * there. A job runs on one type. */
static int find_free_typed(lucid_t *s, const ds_engine_t *e, int32_t j, int32_t part, int32_t *out)
{
    const ds_part_t *p = &e->parts[part];
    int32_t need = e->trace->jobs[j].gpus, best = -1;
    int host_full = 0;
    if (e->cfg.type_order == DS_TYPES_FASTEST) {
        /* the type-aware variant: the job's fastest type with room first, the fullest node there */
        int32_t types[DS_MAX_GPU_TYPES], nt = ds_engine_type_order(e, j, types);
        for (int32_t k = 0; k < nt && best < 0; k++)
            for (int32_t node = p->tnode0[types[k]]; node < p->tnode0[types[k]] + p->tnnodes[types[k]]; node++) {
                const ds_node_t *nd = &e->nodes[node];
                if (need > nd->ngpus || nd->nfree < need) continue;
                if (best >= 0 && nd->nfree >= e->nodes[best].nfree) continue;
                if (!ds_engine_node_fits(e, node, j)) { host_full = 1; continue; }
                best = node;
            }
    }
    int32_t found = best;
    for (int32_t node = p->node0; node < p->node0 + p->nnodes && found < 0; node++) {
        const ds_node_t *nd = &e->nodes[node];
        if (need > nd->ngpus || nd->nfree < need || !ds_engine_type_ok(e, j, nd->gtype)) continue;
        if (best >= 0 && nd->nfree >= e->nodes[best].nfree) continue;
        if (!ds_engine_node_fits(e, node, j)) { host_full = 1; continue; }
        best = node;
    }
    if (best >= 0) {
        ds_engine_node_free_gpus(e, best, need, out);
        return 1;
    }
    for (int32_t t = 0; t < e->ntypes; t++) {
        int32_t gpn = ds_engine_type_gpus_per_node(e, t);
        if (need <= gpn || !ds_engine_type_ok(e, j, t) || p->tgpus_free[t] < need) continue;
        int32_t m = 0;
        for (int32_t node = p->tnode0[t]; node < p->tnode0[t] + p->tnnodes[t]; node++) {
            if (e->nodes[node].nfree == 0) continue;
            int32_t i = m++;
            while (i > 0 && e->nodes[s->nbuf[i - 1]].nfree < e->nodes[node].nfree) s->nbuf[i] = s->nbuf[i - 1], i--;
            s->nbuf[i] = node;
        }
        int32_t rem = need % gpn, left = need / gpn + (rem ? 1 : 0), n = 0, ok = 1;
        for (int32_t i = 0; i < m && left > 0 && ok; i++) {
            int32_t node = s->nbuf[i], want = (rem == 0 || left > 1) ? gpn : rem;
            if (e->nodes[node].nfree < want) ok = 0;
            else if (!ds_engine_node_fits(e, node, j)) ok = 0, host_full = 1;
            else n += ds_engine_node_free_gpus(e, node, want, out + n), left--;
        }
        if (ok && left == 0) return 1;
    }
    return host_full ? -1 : 0;
}

static int find_free(lucid_t *s, const ds_engine_t *e, int32_t j, int32_t part, int32_t *out)
{
    if (e->ntypes > 1) return find_free_typed(s, e, j, part, out);
    int32_t need = e->trace->jobs[j].gpus, gpn = e->cfg.gpus_per_node, nn = nodes_in_order(s, e, part);
    if (need <= gpn) {
        int32_t best = -1;
        int host_full = 0;
        for (int32_t k = 0; k < nn; k++) {
            int32_t node = nth_node(s, e, part, k), f = e->nodes[node].nfree;
            if (f < need || node_offline(s, e, part, node)) continue;
            if (best >= 0 && f >= e->nodes[best].nfree) continue;
            if (!ds_engine_node_fits(e, node, j)) { host_full = 1; continue; }
            best = node;
        }
        if (best < 0) return host_full ? -1 : 0;
        ds_engine_node_free_gpus(e, best, need, out);
        return 1;
    }
    int32_t m = 0, freeall = 0;
    for (int32_t k = 0; k < nn; k++) {
        int32_t node = nth_node(s, e, part, k);
        if (node_offline(s, e, part, node) || e->nodes[node].nfree == 0) continue;
        freeall += e->nodes[node].nfree;
        /* insertion keeps the stable descending order of free GPUs */
        int32_t i = m++;
        while (i > 0 && e->nodes[s->nbuf[i - 1]].nfree < e->nodes[node].nfree) s->nbuf[i] = s->nbuf[i - 1], i--;
        s->nbuf[i] = node;
    }
    if (freeall < need) return 0;
    int32_t rem = need % gpn, left = need / gpn + (rem ? 1 : 0), n = 0;
    for (int32_t i = 0; i < m && left > 0; i++) {
        int32_t node = s->nbuf[i], f = e->nodes[node].nfree;
        if (f < ((rem == 0 || left > 1) ? gpn : rem)) return 0;
        if (!ds_engine_node_fits(e, node, j)) return -1;
        n += ds_engine_node_free_gpus(e, node, (rem == 0 || left > 1) ? gpn : rem, out + n);
        left--;
    }
    return left == 0;
}

/* The first running, unshared job of the same GPU count that may host j (start order). */
static int32_t pick_partner(const lucid_t *s, const ds_engine_t *e, int32_t j, int32_t part)
{
    const ds_job_t *job = &e->trace->jobs[j];
    const ilist_t *r = &s->run[part * (s->gpn + 1) + job->gpus];
    for (int32_t i = 0; i < r->n; i++) {
        int32_t q = r->a[i];
        const ds_job_t *o = &e->trace->jobs[q];
        if (!s->excl[q] || e->js[q].shared || o->gpus != job->gpus) continue;
        if (e->ntypes > 1 && !ds_engine_type_ok(e, j, ds_engine_job_type(e, q))) continue;
        if ((int64_t)o->gmem_mib + job->gmem_mib >= ds_engine_gpu_gmem(e, e->jgpus[e->jgpu_off[q]])) continue;
        if (s->score[q] + s->score[j] > s->cfg.score_limit) continue;
        if (s->prio[j] > s->cfg.prio_factor * s->prio[q]) continue;
        if (!ds_engine_node_fits(e, e->gpus[e->jgpus[e->jgpu_off[q]]].node, j)) continue;
        return q;
    }
    return -1;
}

/* ---- scheduling ---- */

/* Marks whether a running job may host a partner, keeping the per-size counts that let a pass skip
 * the partner search when nobody could host. */
static void set_excl(lucid_t *s, const ds_engine_t *e, int32_t j, int v)
{
    if (s->excl[j] == v) return;
    s->excl[j] = (uint8_t)v;
    int32_t g = e->trace->jobs[j].gpus;
    if (g > s->gpn) return;
    int32_t k = e->js[j].part * (s->gpn + 1) + g;
    s->nexcl[k] += v ? 1 : -1;
    ilist_t *l = &s->run[k];
    int32_t lo = 0, hi = l->n; /* first entry started after j */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (s->sseq[l->a[mid]] <= s->sseq[j]) lo = mid + 1;
        else hi = mid;
    }
    if (v) {
        il_push(l, j);
        memmove(&l->a[lo + 1], &l->a[lo], (size_t)(l->n - 1 - lo) * sizeof *l->a);
        l->a[lo] = j;
    } else {
        DS_ASSERT(lo > 0 && l->a[lo - 1] == j);
        memmove(&l->a[lo - 1], &l->a[lo], (size_t)(l->n - lo) * sizeof *l->a);
        l->n--;
    }
}

static void start_job(lucid_t *s, ds_engine_t *e, int32_t j, const int32_t *gpus, int64_t now)
{
    ds_engine_start(e, j, gpus, now);
    s->sseq[j] = ++s->seq;
}

static void tenant_pass(lucid_t *s, ds_engine_t *e, int32_t part, int64_t now)
{
    int on = sharing_at(s, now);
    if (!s->changed[part] && s->last_flag[part] == on) return; /* nothing new can start */
    s->changed[part] = 0;
    s->last_flag[part] = (int8_t)on;
    ilist_t *q = &s->pend[part];
    int share = on && e->cfg.k >= 2;
    int32_t w = 0, gpn = e->cfg.gpus_per_node;
    int blocked = 0;
    const int32_t *hosts = &s->nexcl[part * (gpn + 1)];
    /* smallest job up to a node, and beyond, that found no free GPUs: larger ones cannot either */
    int32_t nhosts = 0, fail_free = INT32_MAX, fail_big = INT32_MAX;
    for (int32_t g = 1; g <= gpn; g++) nhosts += hosts[g];
    int32_t i = 0;
    for (; i < q->n; i++) {
        int32_t j = q->a[i], g = e->trace->jobs[j].gpus;
        int started = 0, found = -1;
        if (e->js[j].held) {
            /* the driver cannot start it yet: passed over, as if not pending, and looked at again
             * next pass (a release says nothing to this policy) */
            q->a[w++] = j;
            s->changed[part] = 1;
            continue;
        }
        int packable = share && g <= gpn && hosts[g] > 0;
        int freeable = e->parts[part].gpus_free >= g && !(g <= gpn && g >= fail_free) && !(g > gpn && g >= fail_big);
        if (!packable && (!share || nhosts == 0) && (e->parts[part].gpus_free == 0 || fail_free == 1)) {
            /* nothing can start any more in this pass */
            if (!on) blocked = 1;
            break;
        }
        if (!blocked && !packable && !freeable) {
            /* neither a host nor free GPUs for it: ruled out as the search would */
            if (!on) blocked = 1;
        } else if (!blocked) {
            int32_t partner = packable ? pick_partner(s, e, j, part) : -1;
            if (partner >= 0) {
                /* Lucid packs before it looks for free GPUs */
                start_job(s, e, j, &e->jgpus[e->jgpu_off[partner]], now);
                set_excl(s, e, partner, 0);
                nhosts--;
                s->host[j] = partner;
                s->guest[partner] = j;
                /* the reference leaves a guest at its packed speed once its host is gone */
                e->js[j].keep_rate = (uint8_t)s->cfg.reference_pairing;
                s->pairs++;
                started = 1;
            } else if (freeable && (found = find_free(s, e, j, part, s->gbuf)) == 1) {
                start_job(s, e, j, s->gbuf, now);
                set_excl(s, e, j, 1);
                nhosts += g <= gpn;
                started = 1;
            } else {
                /* a job that asks for one type failing says nothing of jobs that may take any */
                if (freeable && found == 0 && (e->ntypes < 2 || !e->trace->jobs[j].gmask)) {
                    if (g <= gpn) fail_free = DS_MIN(fail_free, g);
                    else fail_big = DS_MIN(fail_big, g);
                }
                if (!on) blocked = 1; /* with sharing off the reference stops at the first job that does not fit */
            }
        }
        if (!started) q->a[w++] = j;
    }
    for (; i < q->n; i++) q->a[w++] = q->a[i];
    q->n = w;
}

/* The profiler's outcome replayed: each job that finishes there starts at its computed instant on its
 * computed node (the others only ever held profiler GPUs in the reference's separate pass). */
static void profiler_pass(lucid_t *s, ds_engine_t *e, int32_t part, int64_t now)
{
    while (s->prof_cursor < s->nprof_order && s->prof.start[s->prof_order[s->prof_cursor]] <= now) {
        int32_t j = s->prof_order[s->prof_cursor++], need = e->trace->jobs[j].gpus;
        if (e->js[j].status == DS_JS_FUTURE) continue; /* withdrawn by the driver */
        DS_ASSERT(e->js[j].status == DS_JS_PENDING);
        int32_t node = e->parts[part].node0 + s->prof.slot[j];
        if (e->nodes[node].nfree >= need) {
            ds_engine_node_free_gpus(e, node, need, s->gbuf);
        } else {
            s->prof_misplaced++; /* cannot happen: a subset of what fitted there; kept as a counter */
            node = -1;
            for (int32_t k = 0; k < e->parts[part].nnodes && node < 0; k++)
                if (e->nodes[e->parts[part].node0 + k].nfree >= need) node = e->parts[part].node0 + k;
            /* none (a profiler node out of service): it waits at the head of the profiler's order, which
             * runs again when a profiler GPU is released or the node is back (both mark the partition dirty) */
            if (node < 0) { s->prof_cursor--; break; }
            ds_engine_node_free_gpus(e, node, need, s->gbuf);
        }
        start_job(s, e, j, s->gbuf, now);
    }
}

/* The reference echoes the profiler's scaling onto the scaling tenant after its pass: borrowing takes
 * an idle node (highest name first; nothing when none is idle), giving back adds a node named
 * TEMP_NAME at the end of the placement order (nothing when one already exists). */
static void echo_scaling(lucid_t *s, ds_engine_t *e, int64_t now)
{
    int32_t part = s->scale_part, node0 = e->parts[part].node0, gpn = e->cfg.gpus_per_node;
    while (s->echo_cursor < s->prof.nscale && s->prof.scale_time[s->echo_cursor] <= now) {
        int delta = -s->prof.scale_delta[s->echo_cursor++];
        if (delta < 0) {
            int32_t pick = -1;
            for (int32_t i = 0; i < s->order.n; i++) {
                int32_t k = s->order.a[i];
                if (e->nodes[node0 + k].nfree == gpn && (pick < 0 || s->name[k] > s->name[pick])) pick = k;
            }
            if (pick < 0) { s->echo_failed++; continue; }
            if (s->has_temp && s->name[pick] != TEMP_NAME && s->temp_node >= 0) {
                /* the node named TEMP_NAME is busy: it takes the removed node's name */
                s->name[s->temp_node] = s->name[pick];
                s->temp_node = -1;
            }
            if (pick == s->temp_node) s->temp_node = -1;
            s->offline[pick] = 1;
            il_remove(&s->order, pick);
            s->has_temp = 1;
            s->echo_removed++;
        } else {
            if (s->temp_node >= 0) continue;
            int32_t back = -1;
            for (int32_t k = 0; k < e->parts[part].nnodes; k++)
                if (s->offline[k]) back = k;
            if (back < 0) { s->echo_grow_skipped++; continue; } /* the reference would grow past its quota */
            s->offline[back] = 0;
            s->name[back] = TEMP_NAME;
            s->temp_node = back;
            il_push(&s->order, back);
            s->changed[part] = 1; /* the reference places on it from the next second */
            s->echo_added++;
        }
    }
}

static void lucid_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    (void)timer;
    lucid_t *s = state;
    if (part == s->prof_part) profiler_pass(s, e, part, now);
    else tenant_pass(s, e, part, now);
    if (part == s->scale_part) echo_scaling(s, e, now);
}

static int cmp_pending(const lucid_t *s, const ds_engine_t *e, int32_t a, int32_t b)
{
    if (s->prio[a] != s->prio[b]) return s->prio[a] < s->prio[b] ? -1 : 1;
    return (e->js[a].arrival_seq > e->js[b].arrival_seq) - (e->js[a].arrival_seq < e->js[b].arrival_seq);
}

static void lucid_enqueue(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    lucid_t *s = state;
    int32_t part = e->js[j].part;
    if (part == s->prof_part) return; /* started by the profiler replay */
    /* The reference counts a profiled job's wait for the profiler in its queueing delay, although the
     * job queues in its tenant's partition from its submission on. */
    if (s->cfg.reference_queue) e->js[j].queued += s->prof.queue[j];
    if (isnan(s->prio[j])) {
        const ds_runtime_predictor_t *rp = e->predictors->runtime;
        double v = rp->predict(rp->ctx, e->trace, j, now);
        s->prio[j] = (v >= 1 ? v : 1) * e->trace->jobs[j].gpus;
    }
    ilist_t *q = &s->pend[part];
    int32_t lo = 0, hi = q->n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (cmp_pending(s, e, q->a[mid], j) <= 0) lo = mid + 1;
        else hi = mid;
    }
    il_push(q, j);
    memmove(&q->a[lo + 1], &q->a[lo], (size_t)(q->n - 1 - lo) * sizeof *q->a);
    q->a[lo] = j;
    s->changed[part] = 1;
}

/* A withdrawn job leaves its queue. One that would have finished inside the profiler is skipped when its
 * computed start comes (profiler_pass): the profiler's outcome was computed ahead, from the whole trace. */
static void lucid_withdraw(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    lucid_t *s = state;
    int32_t part = e->js[j].part;
    if (part == s->prof_part) return;
    il_remove(&s->pend[part], j);
    s->changed[part] = 1;
}

static void lucid_on_finish(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    lucid_t *s = state;
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    if (rp && rp->observe_finish) rp->observe_finish(rp->ctx, e->trace, j, now);
    int32_t part = e->js[j].part;
    s->changed[part] = 1;
    set_excl(s, e, j, 0);
    int32_t h = s->host[j], g = s->guest[j];
    if (h >= 0 && s->guest[h] == j) {
        s->guests_first++;
        s->guest[h] = -1;
        set_excl(s, e, h, 1); /* a host whose guest leaves is exclusive again */
    }
    if (g >= 0 && s->host[g] == j) {
        s->host[g] = -1;
        /* The reference looks up "the other job on these GPUs" and finds the leaving host itself, so
         * the guest is never restored: it stays unavailable for packing (and at its packed speed). */
        if (!s->cfg.reference_pairing) set_excl(s, e, g, 1);
    }
}

static int64_t lucid_next_timer(const ds_engine_t *e, const void *state, int64_t now)
{
    (void)e;
    const lucid_t *s = state;
    int32_t lo = 0, hi = s->nwake;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (s->wake[mid] > now) hi = mid;
        else lo = mid + 1;
    }
    return lo < s->nwake ? s->wake[lo] : DS_TIME_NEVER;
}

static int lucid_stats(const ds_engine_t *e, const void *state, ds_policy_stat_t *out, int max)
{
    (void)e;
    const lucid_t *s = state;
    const struct { const char *n; double v; } v[] = {
        {"profiled_jobs", (double)s->prof.profiled},
        {"finished_in_profiler", (double)s->prof.finished},
        {"profiler_scale_ups", 0},
        {"profiler_scaled_seconds", (double)s->prof.scale_up_seconds},
        {"pairs_packed", (double)s->pairs},
        {"guests_ending_before_host", (double)s->guests_first},
        {"scale_tenant_nodes_lent", (double)s->echo_removed},
        {"scale_tenant_lend_failed", (double)s->echo_failed},
        {"scale_tenant_grow_skipped", (double)s->echo_grow_skipped},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0] && n < max; i++, n++) {
        snprintf(out[n].name, sizeof out[n].name, "%s", v[i].n);
        out[n].value = v[i].v;
    }
    if (max > 2) {
        int64_t ups = 0;
        for (int32_t i = 0; i < s->prof.nscale; i++) ups += s->prof.scale_delta[i] > 0;
        out[2].value = (double)ups;
    }
    return n;
}

static void lucid_explain(const ds_engine_t *e, const void *state, int32_t j, int64_t now, ds_buf_t *out)
{
    const lucid_t *s = state;
    const ds_jstate_t *js = &e->js[j];
    const ds_job_t *job = &e->trace->jobs[j];
    if (js->status != DS_JS_PENDING && js->status != DS_JS_RUNNING) return;
    if (js->part == s->prof_part) {
        ds_bprintf(out, "  profiler: finishes inside the profiler (%lld s or less), started there at t=%lld\n",
                   (long long)s->cfg.prof_time, (long long)s->prof.start[j]);
        return;
    }
    if (s->prof.start[j] >= 0)
        ds_bprintf(out, "  profiler: profiled for %lld s from t=%lld, then queued in its tenant's partition\n",
                   (long long)s->cfg.prof_time, (long long)s->prof.start[j]);
    int on = sharing_at(s, now);
    if (js->status == DS_JS_RUNNING) {
        if (s->host[j] >= 0) ds_bprintf(out, "  packing: runs as the guest of job %lld\n", (long long)e->trace->jobs[s->host[j]].id);
        else if (s->guest[j] >= 0) ds_bprintf(out, "  packing: hosts job %lld on its GPUs\n", (long long)e->trace->jobs[s->guest[j]].id);
        else ds_bprintf(out, "  packing: runs alone%s\n", s->excl[j] ? "; a job of its GPU count may be packed beside it" : "");
        ds_bputs(out, "  preemption: none, lucid never stops a running job\n");
        return;
    }
    const ilist_t *q = &s->pend[js->part];
    int32_t ahead = 0;
    for (int32_t i = 0; i < q->n; i++) ahead += q->a[i] != j && cmp_pending(s, e, q->a[i], j) < 0;
    if (isnan(s->prio[j])) ds_bprintf(out, "  order: smallest estimated GPU-time first (estimated when it arrives)\n");
    else
        ds_bprintf(out, "  order: smallest estimated GPU-time first: %.0f GPU-s; %d of %d waiting in its partition\n",
                   s->prio[j], ahead + 1, q->n);
    ds_bprintf(out, "  sharing: %s now (predicted throughput)%s\n", on ? "on" : "off",
               on ? ": jobs behind it may start where it does not fit" : ": it waits behind the first job that does not fit");
    if (on && e->cfg.k >= 2 && job->gpus <= s->gpn)
        ds_bprintf(out, "  packing: onto a running job of %d GPU%s whose sharing score plus its own (%d) is at most %d and "
                   "whose GPU-time is at least its own / %g\n", job->gpus, job->gpus == 1 ? "" : "s", s->score[j],
                   s->cfg.score_limit, s->cfg.prio_factor);
    ds_explain_fit(e, j, out);
}

/* the two tables the driver reads for it (src/trace/lucid_inputs.c) */
static const ds_policy_input_t lucid_inputs[] = {
    {"lucid-single", DS_INPUT_LUCID_LABELS},
    {"lucid-throughput", DS_INPUT_LUCID_SERIES},
    {NULL, 0},
};

const ds_policy_ops_t ds_policy_lucid = {
    .name = "lucid",
    .summary = "Lucid: profiler for small jobs, packing by sharing score, throughput-driven sharing switch",
    .props = DS_POLICY_COLOCATES | DS_POLICY_USES_ESTIMATES | DS_POLICY_TYPED,
    .setup = lucid_setup,
    .init = lucid_init,
    .fini = lucid_fini,
    .enqueue = lucid_enqueue,
    .withdraw = lucid_withdraw,
    .on_finish = lucid_on_finish,
    .schedule = lucid_schedule,
    .next_timer = lucid_next_timer,
    .config_new = ds_lucid_config_new,
    .config_free = ds_lucid_config_free,
    .config_set = ds_lucid_config_set,
    .config_help = ds_lucid_config_help,
    .inputs = lucid_inputs,
    .config_input = ds_lucid_config_input,
    .stats = lucid_stats,
    .explain = lucid_explain,
};
