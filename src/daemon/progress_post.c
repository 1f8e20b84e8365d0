/* progress_post.c: job-reported progress over HTTP (POST /api/progress), the file protocol's twin for
 * clusters without a filesystem shared with the controller. A report is a munge credential (munge(1),
 * the same trust root Slurm itself uses) whose payload is "job=ID rate=STEPS_PER_S": munged vouches for
 * the uid that made it, refuses it once expired or replayed, and deepshared takes it only for a running
 * job of that very uid (root, the operator, excepted), so no user can report for another user's job
 * (docs/deepshared.md, Access and threat model). The sample's time is the credential's encode time. */
#include "daemon/daemon.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DS_HAVE_MUNGE
#include <munge.h>

static int munge_verify(const char *cred, char *payload, size_t n, uint32_t *uid, double *t_encode, char *err,
                        size_t errn)
{
    munge_ctx_t ctx = munge_ctx_create();
    if (!ctx) {
        snprintf(err, errn, "munge: out of memory");
        return -1;
    }
    void *buf = NULL;
    int len = 0;
    uid_t u;
    gid_t g;
    munge_err_t e = munge_decode(cred, ctx, &buf, &len, &u, &g);
    if (e != EMUNGE_SUCCESS) {
        snprintf(err, errn, "munge credential refused: %s", munge_strerror(e));
        free(buf);
        munge_ctx_destroy(ctx);
        return -1;
    }
    time_t te = 0;
    munge_ctx_get(ctx, MUNGE_OPT_ENCODE_TIME, &te);
    munge_ctx_destroy(ctx);
    size_t k = buf && len > 0 ? (size_t)len : 0;
    if (k >= n) k = n - 1;
    if (k) memcpy(payload, buf, k);
    payload[k] = 0;
    free(buf);
    *uid = (uint32_t)u;
    *t_encode = (double)te;
    return 0;
}
progress_verify_fn daemon_progress_verify = munge_verify;
#else
progress_verify_fn daemon_progress_verify = NULL;
#endif

/* "job=ID rate=R": both keys once, in that order, nothing else; R finite in [0, 1e9]. */
static int parse_report(const char *p, uint32_t *id, double *rate)
{
    char extra;
    unsigned long j;
    char rs[64];
    if (sscanf(p, " job=%lu rate=%63s %c", &j, rs, &extra) != 2 || j == 0 || j > 0xffffffffUL) return -1;
    if (strchr(p, '-')) return -1; /* strtoul takes "-1" */
    char *end;
    errno = 0;
    double r = strtod(rs, &end);
    if (end == rs || *end || errno || !isfinite(r) || r < 0 || r > 1e9) return -1;
    *id = (uint32_t)j;
    *rate = r;
    return 0;
}

int daemon_progress_post(daemon_t *d, const char *body, size_t len, char *msg, size_t n)
{
    int code;
    char payload[256], err[300];
    uint32_t uid = 0, id = 0;
    double t_enc = 0, rate = 0;
    if (d->cfg.tel.kind != TEL_PROGRESS) {
        snprintf(msg, n, "telemetry is not 'progress' in %s: reports are not taken", d->cfg.path[0] ? d->cfg.path : "the config");
        code = 409;
    } else if (!daemon_progress_verify) {
        snprintf(msg, n, "deepshared was built without libmunge (libmunge-dev): HTTP reports are unavailable");
        code = 501;
    } else if (len == 0 || len > D_POST_MAX || memchr(body, 0, len)) {
        snprintf(msg, n, "expected a munge credential (munge -s 'job=ID rate=STEPS_PER_S'), at most %d bytes", D_POST_MAX);
        code = 400;
    } else {
        char cred[D_POST_MAX + 1];
        memcpy(cred, body, len);
        cred[len] = 0;
        if (daemon_progress_verify(cred, payload, sizeof payload, &uid, &t_enc, err, sizeof err)) {
            snprintf(msg, n, "%s", err);
            code = 401;
        } else if (parse_report(payload, &id, &rate)) {
            snprintf(msg, n, "the credential's payload is not 'job=ID rate=STEPS_PER_S'");
            code = 400;
        } else {
            const sl_job_t *j = daemon_find_job(d, id);
            if (!j || j->state != SL_RUNNING) {
                snprintf(msg, n, "job %u is not running in Slurm", id);
                code = 404;
            } else if (uid != j->uid && uid != 0) {
                /* logged: someone tried to steer another user's job */
                snprintf(msg, n, "job %u is not yours: a job's progress is taken only from its own user", id);
                dlog(0, "progress report for job %u refused: made by uid %u, the job is uid %u's", id, uid, j->uid);
                code = 403;
            } else {
                tel_ingest(&d->tel, id, rate, t_enc > 0 ? t_enc : tel_now());
                snprintf(msg, n, "ok: job %u at %g steps/s\n", id, rate);
                code = 200;
            }
        }
    }
    d->posts[code == 200 ? 0 : code == 400 ? 1 : code == 401 ? 2 : code == 403 ? 3 : code == 404 ? 4 : 5]++;
    size_t l = strlen(msg);
    if (l + 1 < n && (l == 0 || msg[l - 1] != '\n')) msg[l] = '\n', msg[l + 1] = 0;
    return code;
}
