/* status.c: the live status page at / (tenants with their QAD history, the queue in scheduling order with
 * each job's reason to wait, the nodes x GPUs map) and the same facts as JSON at /api/status, rendered
 * from the daemon's state under its lock. Every name that comes from users, Slurm or the config goes out
 * through bput_html or bput_json. */
#include "daemon/daemon.h"
#include "daemon/sbuf.h"
#include "deepshare/qad.h"
#include "www_assets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STATUS_SAMPLES 360    /* history points per tenant, one per status_window / STATUS_SAMPLES seconds */
#define STATUS_QUEUE_MAX 100  /* queued jobs shown, each with its explanation */
#define CHART_W 240
#define CHART_H 44

typedef struct status_ring {
    int nt;
    int64_t n;                /* samples taken */
    int64_t last;             /* time of the last sample (the daemon's clock, Unix seconds) */
    int64_t t[STATUS_SAMPLES];
    float *sr, *sp;           /* [slot * nt + tenant]: smoothed reported QAD, smoothed policy QAD */
    uint8_t *dem;             /* the tenant had demand (GPUs held or pending) */
    int64_t *cyc_dem, *cyc_ok; /* since start: cycles with demand, and those with reported QAD >= threshold */
} status_ring_t;

static status_ring_t *ring_new(int nt)
{
    status_ring_t *r = ds_xcalloc(1, sizeof *r);
    r->nt = nt;
    size_t cells = (size_t)STATUS_SAMPLES * (size_t)(nt ? nt : 1);
    r->sr = ds_xcalloc(cells, sizeof *r->sr);
    r->sp = ds_xcalloc(cells, sizeof *r->sp);
    r->dem = ds_xcalloc(cells, 1);
    r->cyc_dem = ds_xcalloc((size_t)(nt ? nt : 1), sizeof *r->cyc_dem);
    r->cyc_ok = ds_xcalloc((size_t)(nt ? nt : 1), sizeof *r->cyc_ok);
    return r;
}

static void ring_free(status_ring_t *r)
{
    if (!r) return;
    free(r->sr), free(r->sp), free(r->dem), free(r->cyc_dem), free(r->cyc_ok), free(r);
}

void status_free(daemon_t *d)
{
    ring_free(d->ring);
    d->ring = NULL;
}

void status_sample(daemon_t *d)
{
    const ds_engine_t *e = d->e;
    int nt = d->cfg.ntenants;
    if (!e) return;
    if (!d->ring || d->ring->nt != nt) {
        ring_free(d->ring);
        d->ring = ring_new(nt);
    }
    status_ring_t *r = d->ring;
    double theta = daemon_theta(d);
    for (int i = 0; i < nt; i++)
        if (ds_engine_qad_demand(e, i, DS_QAD_ALL)) {
            r->cyc_dem[i]++;
            r->cyc_ok[i] += d->ten[i].Sr >= theta;
        }
    double every = d->cfg.status_window / STATUS_SAMPLES;
    if (r->n > 0 && (double)(d->now - r->last) < every) return;
    int64_t slot = r->n % STATUS_SAMPLES;
    r->t[slot] = d->now;
    for (int i = 0; i < nt; i++) {
        r->sr[slot * nt + i] = (float)d->ten[i].Sr;
        r->sp[slot * nt + i] = (float)d->ten[i].S;
        r->dem[slot * nt + i] = (uint8_t)ds_engine_qad_demand(e, i, DS_QAD_ALL);
    }
    r->n++;
    r->last = d->now;
}

void status_tenants_changed(daemon_t *d, char (*old_names)[64], int old_n)
{
    status_ring_t *o = d->ring;
    if (!o) return;
    int nt = d->cfg.ntenants;
    status_ring_t *r = ring_new(nt);
    r->n = o->n;
    r->last = o->last;
    memcpy(r->t, o->t, sizeof r->t);
    for (int i = 0; i < nt; i++) {
        int k = -1;
        for (int j = 0; j < old_n && j < o->nt; j++)
            if (!strcmp(old_names[j], d->cfg.tenants[i].name)) k = j;
        if (k < 0) continue; /* a new tenant: no history, no demand */
        for (int s = 0; s < STATUS_SAMPLES; s++) {
            r->sr[s * nt + i] = o->sr[s * o->nt + k];
            r->sp[s * nt + i] = o->sp[s * o->nt + k];
            r->dem[s * nt + i] = o->dem[s * o->nt + k];
        }
        r->cyc_dem[i] = o->cyc_dem[k];
        r->cyc_ok[i] = o->cyc_ok[k];
    }
    ring_free(o);
    d->ring = r;
}

/* Samples of the ring inside the window, oldest first: writes slot indices to v, returns how many. */
static int window_slots(const daemon_t *d, int *v)
{
    const status_ring_t *r = d->ring;
    if (!r) return 0;
    int64_t have = r->n < STATUS_SAMPLES ? r->n : STATUS_SAMPLES, k = 0;
    for (int64_t i = r->n - have; i < r->n; i++) {
        int s = (int)(i % STATUS_SAMPLES);
        if ((double)(d->now - r->t[s]) <= d->cfg.status_window) v[k++] = s;
    }
    return (int)k;
}

/* Share of the window's samples with demand whose smoothed reported QAD reached the threshold; -1 none. */
static double window_compliance(const daemon_t *d, int i, const int *v, int nv, double theta)
{
    const status_ring_t *r = d->ring;
    int dem = 0, ok = 0;
    for (int k = 0; k < nv; k++) {
        if (!r->dem[v[k] * r->nt + i]) continue;
        dem++;
        ok += r->sr[v[k] * r->nt + i] >= theta;
    }
    return dem ? (double)ok / dem : -1;
}

static void duration(ds_buf_t *b, double s)
{
    if (s < 120) ds_bprintf(b, "%.0f s", s);
    else if (s < 7200) ds_bprintf(b, "%.0f min", s / 60);
    else if (s < 172800) ds_bprintf(b, "%.1f h", s / 3600);
    else ds_bprintf(b, "%.1f d", s / 86400);
}

/* A tenant's smoothed QAD over the window: reported (solid), the policy's signal (dotted), threshold (dashed). */
static void chart(ds_buf_t *b, const daemon_t *d, int i, const int *v, int nv, double theta)
{
    const status_ring_t *r = d->ring;
    /* the x axis spans the window, or the history there is when it is shorter (a daemon started lately) */
    double t0 = DS_MAX((double)d->now - d->cfg.status_window, (double)r->t[v[0]]), w = DS_MAX(1.0, (double)d->now - t0);
#define X(t) (((double)(t) - t0) / w * (CHART_W - 2) + 1)
#define Y(q) ((1.0 - DS_MIN(1.0, DS_MAX(0.0, (double)(q)))) * (CHART_H - 4) + 2)
    ds_bprintf(b, "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">", CHART_W, CHART_H,
            CHART_W, CHART_H);
    ds_bputs(b, "<title>smoothed QAD of ");
    bput_html(b, d->cfg.tenants[i].name);
    ds_bputs(b, " over the last ");
    duration(b, w);
    ds_bprintf(b, " (solid: all GPUs held; dotted: guaranteed only; dashed: threshold %.2f)</title>", theta);
    ds_bprintf(b, "<rect class=\"frame\" x=\"0.5\" y=\"0.5\" width=\"%d\" height=\"%d\"/>", CHART_W - 1, CHART_H - 1);
    ds_bprintf(b, "<line class=\"theta\" x1=\"1\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", CHART_W - 1, Y(theta), Y(theta));
    for (int line = 1; line >= 0 && nv > 0; line--) {
        const float *q = line ? r->sp : r->sr;
        ds_bprintf(b, "<polyline class=\"%s t%d\" points=\"", line ? "qp" : "qr", i % 8);
        for (int k = 0; k < nv; k++) ds_bprintf(b, "%s%.1f,%.1f", k ? " " : "", X(r->t[v[k]]), Y(q[v[k] * r->nt + i]));
        if (nv == 1) ds_bprintf(b, " %.1f,%.1f", X(r->t[v[0]]) + 2, Y(q[v[0] * r->nt + i])); /* one point: a dash */
        ds_bputs(b, "\"/>");
    }
    ds_bputs(b, "</svg>");
#undef X
#undef Y
}

static const char *klass_name(int k) { return k == DS_CLASS_BE ? "BE" : k == DS_CLASS_G ? "G" : ""; }

/* The explanation without its first line (the job, its tenant and status: the table has them): why it waits. */
static const char *reason_of(const char *ex)
{
    const char *p = strchr(ex, '\n');
    return p ? p + 1 : "";
}

static void json_lines(ds_buf_t *b, const char *s)
{
    ds_bputs(b, "[");
    int first = 1;
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        char *line = ds_xmalloc(len + 1);
        memcpy(line, s, len);
        line[len] = 0;
        char *t = line;
        while (*t == ' ') t++;
        if (*t) {
            ds_bputs(b, first ? "" : ",");
            bput_json(b, t);
            first = 0;
        }
        free(line);
        s += len + (nl ? 1 : 0);
    }
    ds_bputs(b, "]");
}

void status_render(daemon_t *d, char **html_main, char **json)
{
    ds_buf_t h = {0}, j = {0};
    const ds_engine_t *e = d->e;
    int nt = d->cfg.ntenants;
    double theta = daemon_theta(d);
    int64_t now = d->now ? d->now : (int64_t)time(NULL);
    char when[40];
    struct tm tm;
    time_t tt = (time_t)now;
    gmtime_r(&tt, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    int64_t busy = 0, shared = 0;
    for (int32_t g = 0; e && g < e->ngpus; g++) busy += e->gpus[g].nres > 0, shared += e->gpus[g].nres > 1;
    int gpn = e ? e->cfg.gpus_per_node : d->gpn;

    /* ---- header */
    ds_bputs(&h, "<header><h1>deepshared</h1><p class=\"meta\">policy <b>");
    bput_html(&h, d->ops ? d->ops->name : "?");
    ds_bprintf(&h, "</b> &middot; version %s &middot; slurmctld <span class=\"%s\">%s</span> &middot; ", DS_VERSION,
            d->slurm_up ? "up" : "down", d->slurm_up ? "answers" : "unreachable");
    ds_bprintf(&h, "%d nodes &times; %d GPUs, %lld busy, %lld shared &middot; cycle %g s &middot; updated <time>%s</time></p></header>\n",
            d->nnodes, gpn, (long long)busy, (long long)shared, d->cfg.cycle, when);
    ds_bputs(&j, "{\"version\":");
    bput_json(&j, DS_VERSION);
    ds_bputs(&j, ",\"policy\":");
    bput_json(&j, d->ops ? d->ops->name : "?");
    ds_bprintf(&j, ",\"time\":%lld,\"slurmctld_up\":%s,\"cycle_seconds\":%g,\"qad_threshold\":%g,\"status_window_seconds\":%g",
            (long long)now, d->slurm_up ? "true" : "false", d->cfg.cycle, theta, d->cfg.status_window);
    ds_bprintf(&j, ",\"cluster\":{\"nodes\":%d,\"gpus_per_node\":%d,\"gpus\":%d,\"busy\":%lld,\"shared\":%lld}", d->nnodes, gpn,
            e ? e->ngpus : 0, (long long)busy, (long long)shared);

    /* ---- tenants */
    int *v = ds_xmalloc(STATUS_SAMPLES * sizeof *v);
    int nv = window_slots(d, v);
    ds_bputs(&h, "<section id=\"tenants\"><h2>Tenants</h2>\n<table><thead><tr><th>tenant</th><th>quota</th>"
              "<th title=\"GPUs held by guaranteed jobs\">G</th><th title=\"GPUs held by best-effort jobs\">BE</th>"
              "<th title=\"GPUs asked by pending jobs\">pending</th><th title=\"this cycle, all GPUs held\">QAD</th>"
              "<th title=\"smoothed over cycles\">smoothed</th><th title=\"samples with demand whose smoothed QAD reached "
              "the threshold, over the chart's window\">compliance</th><th>smoothed QAD, last ");
    duration(&h, d->cfg.status_window);
    ds_bputs(&h, "</th></tr></thead><tbody>\n");
    ds_bputs(&j, ",\"tenants\":[");
    for (int i = 0; i < nt; i++) {
        int64_t g = e ? e->tenant_g_gpus[i] : 0, be = e ? e->tenant_be_gpus[i] : 0, p = e ? e->tenant_pending_gpus[i] : 0;
        const dtenant_t *t = d->ten ? &d->ten[i] : &(dtenant_t){0};
        double c = d->ring ? window_compliance(d, i, v, nv, theta) : -1;
        int under = t->S < theta && p > 0;
        ds_bprintf(&h, "<tr id=\"tenant-%d\"%s><th class=\"name t%d\">", i, under ? " class=\"under\"" : "", i % 8);
        bput_html(&h, d->cfg.tenants[i].name);
        ds_bprintf(&h, "</th><td>%d</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.2f</td><td>%.2f%s</td>",
                d->cfg.tenants[i].quota, (long long)g, (long long)be, (long long)p, t->Qr, t->Sr,
                under ? " <span class=\"warn\">under-served</span>" : "");
        if (c < 0) ds_bputs(&h, "<td>&ndash;</td><td>");
        else ds_bprintf(&h, "<td>%.0f%%</td><td>", 100 * c);
        if (nv) chart(&h, d, i, v, nv, theta);
        else ds_bputs(&h, "<span class=\"muted\">no cycle yet</span>");
        ds_bputs(&h, "</td></tr>\n");
        ds_bputs(&j, i ? ",{\"name\":" : "{\"name\":");
        bput_json(&j, d->cfg.tenants[i].name);
        ds_bprintf(&j, ",\"quota_gpus\":%d,\"guaranteed_gpus\":%lld,\"best_effort_gpus\":%lld,\"pending_gpus\":%lld,"
                    "\"qad\":%.4f,\"qad_smoothed\":%.4f,\"qad_policy_smoothed\":%.4f,\"under_served\":%s,",
                d->cfg.tenants[i].quota, (long long)g, (long long)be, (long long)p, t->Qr, t->Sr, t->S,
                under ? "true" : "false");
        if (c < 0) ds_bputs(&j, "\"compliance\":null");
        else ds_bprintf(&j, "\"compliance\":%.4f", c);
        ds_bprintf(&j, ",\"cycles_with_demand\":%lld,\"cycles_compliant\":%lld,\"history\":[",
                (long long)(d->ring ? d->ring->cyc_dem[i] : 0), (long long)(d->ring ? d->ring->cyc_ok[i] : 0));
        for (int k = 0; k < nv; k++)
            ds_bprintf(&j, "%s[%lld,%.4f,%.4f,%d]", k ? "," : "", (long long)d->ring->t[v[k]], d->ring->sr[v[k] * nt + i],
                    d->ring->sp[v[k] * nt + i], d->ring->dem[v[k] * nt + i]);
        ds_bputs(&j, "]}");
    }
    free(v);
    ds_bputs(&h, "</tbody></table></section>\n");
    ds_bputs(&j, "]");

    /* ---- the queue, in the order the policy's next pass considers it (shown after the map: it may be long) */
    ds_buf_t hq = {0};
    int32_t ord[STATUS_QUEUE_MAX];
    int32_t npend = e ? ds_engine_pending_order(e, ord, STATUS_QUEUE_MAX) : 0, shown = DS_MIN(npend, STATUS_QUEUE_MAX);
    ds_bprintf(&hq, "<section id=\"queue\"><h2>Queue <span class=\"muted\">%d pending%s, in scheduling order</span></h2>\n",
            npend, npend > shown ? ", the first 100 shown" : "");
    /* jobs deepshared does not schedule (screen.c): deepshare explain JOB says why */
    if (d->nrefused || d->nwaiting || d->nforeign)
        ds_bprintf(&hq, "<p class=\"muted\" id=\"unscheduled\">Not in the queue: %d refused in staging, %d waiting for "
                   "Slurm (begin time, dependency), %d in deepshared's partitions not dispatched by it "
                   "(<code>deepshare explain JOB</code> says why).</p>\n", d->nrefused, d->nwaiting, d->nforeign);
    ds_bprintf(&j, ",\"unscheduled\":{\"refused\":%d,\"waiting_slurm\":%d,\"foreign\":%d}", d->nrefused, d->nwaiting,
               d->nforeign);
    ds_bprintf(&j, ",\"queue\":{\"pending\":%d,\"shown\":%d,\"jobs\":[", npend, shown);
    if (!shown) ds_bputs(&hq, "<p class=\"muted\">No job waits.</p>\n");
    else ds_bputs(&hq, "<table><thead><tr><th>#</th><th>job</th><th>tenant</th><th>user</th><th>GPUs</th><th>class</th>"
                   "<th>waiting</th><th>predicted</th><th>why it waits</th></tr></thead><tbody>\n");
    for (int32_t k = 0; k < shown; k++) {
        int32_t s = ord[k];
        const ds_job_t *job = &d->trace.jobs[s];
        const char *user = job->user >= 0 ? d->trace.users.s[job->user] : "?";
        char *ex = daemon_explain(d, d->slot[s].id);
        const char *why = ex ? reason_of(ex) : "";
        double wait = (double)(now - job->submit);
        ds_bprintf(&hq, "<tr id=\"job-%u\"><td>%d</td><td class=\"id\">%u</td><td class=\"t%d\">", d->slot[s].id, k + 1,
                d->slot[s].id, job->tenant % 8);
        bput_html(&hq, d->cfg.tenants[job->tenant].name);
        ds_bputs(&hq, "</td><td>");
        bput_html(&hq, user);
        ds_bprintf(&hq, "</td><td>%d</td><td>%s</td><td>", job->gpus, job->klass == DS_CLASS_BE ? "BE (asked)" : "");
        duration(&hq, wait > 0 ? wait : 0);
        ds_bputs(&hq, "</td><td>");
        duration(&hq, job->estimate);
        ds_bputs(&hq, "</td><td><pre class=\"why\">");
        for (const char *l = why; *l;) { /* explain's lines without their indent */
            while (*l == ' ') l++;
            const char *nl = strchr(l, '\n');
            size_t len = nl ? (size_t)(nl - l + 1) : strlen(l);
            char *line = ds_xmalloc(len + 1);
            memcpy(line, l, len);
            line[len] = 0;
            bput_html(&hq, line);
            free(line);
            l += len;
        }
        ds_bputs(&hq, "</pre></td></tr>\n");
        ds_bprintf(&j, "%s{\"id\":%u,\"position\":%d,\"tenant\":", k ? "," : "", d->slot[s].id, k + 1);
        bput_json(&j, d->cfg.tenants[job->tenant].name);
        ds_bputs(&j, ",\"user\":");
        bput_json(&j, user);
        ds_bprintf(&j, ",\"gpus\":%d,\"best_effort_asked\":%s,\"waiting_seconds\":%.0f,\"predicted_seconds\":%.0f,\"reason\":",
                job->gpus, job->klass == DS_CLASS_BE ? "true" : "false", wait > 0 ? wait : 0, job->estimate);
        json_lines(&j, why);
        ds_bputs(&j, ",\"explain\":");
        bput_json(&j, ex ? ex : "");
        ds_bputs(&j, "}");
        free(ex);
    }
    if (shown) ds_bputs(&hq, "</tbody></table>\n");
    ds_bputs(&hq, "</section>\n");
    ds_bputs(&j, "]}");

    /* ---- nodes x GPUs */
    ds_bputs(&h, "<section id=\"gpus\"><h2>GPUs <span class=\"muted\">jobs holding or sharing each GPU</span></h2>\n");
    ds_bputs(&j, ",\"nodes\":[");
    if (!e) ds_bputs(&h, "<p class=\"muted\">No state yet (waiting for Slurm).</p>\n");
    else {
        ds_bputs(&h, "<table class=\"map\"><thead><tr><th>node</th>");
        for (int g = 0; g < gpn; g++) ds_bprintf(&h, "<th>GPU %d</th>", g);
        ds_bputs(&h, "</tr></thead><tbody>\n");
    }
    for (int32_t n = 0; e && n < e->nnodes; n++) {
        const char *name = n < d->nnodes ? d->nodes[n].name : "?";
        const char *down = n < d->nnodes && ds_engine_node_down(e, n) ? d->nodes[n].down_why : NULL;
        ds_bputs(&h, "<tr><th>");
        bput_html(&h, name);
        if (down) {
            ds_bputs(&h, " <span class=\"muted\">(");
            bput_html(&h, down);
            ds_bputs(&h, ")</span>");
        }
        ds_bputs(&h, "</th>");
        ds_bputs(&j, n ? ",{\"name\":" : "{\"name\":");
        bput_json(&j, name);
        if (down) {
            ds_bputs(&j, ",\"unavailable\":");
            bput_json(&j, down);
        }
        ds_bputs(&j, ",\"gpus\":[");
        for (int32_t g = 0; g < e->nodes[n].ngpus; g++) {
            const ds_gpu_t *gp = ds_engine_gpu(e, e->nodes[n].gpu0 + g);
            ds_bprintf(&h, "<td class=\"%s\">", gp->nres > 1 ? "shared" : gp->nres ? "busy" : "idle");
            ds_bprintf(&j, "%s[", g ? "," : "");
            for (int32_t r = 0; r < gp->nres; r++) {
                int32_t s = gp->res[r];
                const ds_job_t *job = &d->trace.jobs[s];
                const char *k = klass_name(ds_engine_job(e, s)->klass);
                ds_bprintf(&h, "<span class=\"job t%d %s\" title=\"job %u, tenant ", job->tenant % 8, k, d->slot[s].id);
                bput_html(&h, d->cfg.tenants[job->tenant].name);
                ds_bprintf(&h, ", %s, %d GPU%s\">%u<small>%s</small></span>", k, job->gpus, job->gpus == 1 ? "" : "s",
                        d->slot[s].id, k);
                ds_bprintf(&j, "%s{\"id\":%u,\"tenant\":", r ? "," : "", d->slot[s].id);
                bput_json(&j, d->cfg.tenants[job->tenant].name);
                ds_bprintf(&j, ",\"class\":\"%s\",\"gpus\":%d}", k, job->gpus);
            }
            ds_bputs(&h, "</td>");
            ds_bputs(&j, "]");
        }
        ds_bputs(&h, "</tr>\n");
        ds_bputs(&j, "]}");
    }
    if (e) ds_bputs(&h, "</tbody></table>\n");
    ds_bputs(&h, "</section>\n");
    char *queue = ds_bdone(&hq);
    ds_bputs(&h, queue);
    free(queue);
    ds_bputs(&j, "]}\n");
    *html_main = ds_bdone(&h);
    *json = ds_bdone(&j);
}

char *status_page(const char *html_main, const char *token_query)
{
    ds_buf_t b = {0};
    ds_bputs(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
              "<title>deepshared status</title><link rel=\"icon\" href=\"data:,\">"
              "<link rel=\"stylesheet\" href=\"/static/status.css\">"
              "<script src=\"/static/status.js\" defer></script>"
              "<noscript><meta http-equiv=\"refresh\" content=\"10\"></noscript></head>\n<body>\n<main id=\"status\">\n");
    ds_bputs(&b, html_main);
    ds_bputs(&b, "</main>\n<footer>Refreshes every 5 s. <a href=\"/api/status");
    bput_html(&b, token_query);
    ds_bputs(&b, "\">/api/status</a> (JSON) &middot; <a href=\"/metrics");
    bput_html(&b, token_query);
    ds_bputs(&b, "\">/metrics</a> &middot; "
              "<code>deepshare explain JOBID</code> &middot; <span id=\"refresh\"></span></footer>\n</body></html>\n");
    return ds_bdone(&b);
}

const char *status_asset(const char *url, size_t *len, const char **type)
{
    if (!strcmp(url, "/static/status.css")) {
        *len = sizeof www_status_css - 1;
        *type = "text/css; charset=utf-8";
        return (const char *)www_status_css;
    }
    if (!strcmp(url, "/static/status.js")) {
        *len = sizeof www_status_js - 1;
        *type = "text/javascript; charset=utf-8";
        return (const char *)www_status_js;
    }
    return NULL;
}
