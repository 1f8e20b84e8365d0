/* dconfig.c: reads deepshared's configuration file; any mistake is reported with its file, line and key. */
#include "dconfig.h"

#include <arpa/inet.h>
#include <grp.h>
#include <pwd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void dconfig_default(dconfig_t *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->policy, sizeof c->policy, "deepshare");
    c->cycle = 60;
    c->poll = 0.5;
    snprintf(c->staging, sizeof c->staging, "staging");
    snprintf(c->g_partition, sizeof c->g_partition, "prod");
    snprintf(c->be_partition, sizeof c->be_partition, "batch");
    snprintf(c->listen_addr, sizeof c->listen_addr, "127.0.0.1");
    c->listen_port = 9464;
    snprintf(c->journal, sizeof c->journal, "/var/lib/deepshared/journal.csv");
    c->missing_rho = 1.0;
    c->default_runtime = 3600;
    c->runtime_model = 1;
    c->batch_gap = 60; /* the simulator's --batch-gap default: what the suite measured is what runs here */
    c->min_history = 3;
    c->gmem_mib = 24576;
    c->default_gmem_mib = 8192;
    c->k = 2;
    c->gpu_sharing = 1;
    c->qad_lambda = 0.3;
    c->qad_theta = 0.95;
    c->job_capacity = 4096;
    c->dispatch_timeout = 30;
    c->preempt_signal = SIGTERM;
    snprintf(c->lease_key, sizeof c->lease_key, "/deepshared/leader");
    c->lease_ttl = 5;
    c->status_window = 21600;
    tel_config_default(&c->tel);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    return s;
}

/* Written as !(x >= lo && x <= hi) so that NaN fails it: a NaN cycle or capacity spins the daemon. */
static int num(const char *path, long line, const char *key, const char *v, double lo, double hi, int integer,
               double *out, ds_error_t *err)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *trim(end) || !(x >= lo && x <= hi) || (integer && x != floor(x))) {
        ds_error_set(err, path, line, key, "expected %s in [%g, %g], got '%s'", integer ? "an integer" : "a number", lo,
                     hi, v);
        return DS_EPARSE;
    }
    *out = x;
    return DS_OK;
}

static int str(const char *path, long line, const char *key, const char *v, char *dst, size_t n, ds_error_t *err)
{
    if (strlen(v) >= n) {
        ds_error_set(err, path, line, key, "value longer than %zu characters", n - 1);
        return DS_EPARSE;
    }
    snprintf(dst, n, "%s", v);
    return DS_OK;
}

/* A read token: 16 to 127 printable characters without spaces (it travels in an HTTP header and a URL). */
static int token_value(const char *path, long line, const char *key, const char *v, char *dst, size_t n,
                       ds_error_t *err)
{
    size_t len = strlen(v);
    for (const char *p = v; *p; p++)
        if (*p <= ' ' || *p > '~' || *p == '&' || *p == '#' || *p == '%' || *p == '+') {
            ds_error_set(err, path, line, key, "the token may hold only printable characters other than space, "
                         "'&', '#', '%%' and '+' (it goes into URLs)");
            return DS_EPARSE;
        }
    if (len < 16 || len >= n) {
        ds_error_set(err, path, line, key, "the token must have 16 to %zu characters, got %zu "
                     "(e.g. 'openssl rand -hex 16' or 'head -c 24 /dev/urandom | base64 | tr -d +/=')", n - 1, len);
        return DS_EPARSE;
    }
    snprintf(dst, n, "%s", v);
    return DS_OK;
}

/* A file others on the machine may read cannot keep a secret: refused, as ssh refuses such keys. */
static int private_file(const char *path, long line, const char *key, const char *file, ds_error_t *err)
{
    struct stat st;
    if (stat(file, &st)) {
        ds_error_set(err, path, line, key, "cannot stat '%s': %s", file, strerror(errno));
        return DS_EPARSE;
    }
    if (st.st_mode & S_IROTH) {
        ds_error_set(err, path, line, key, "'%s' is readable by every user (mode %03o): the token would not be a secret "
                     "(chmod o-r)", file, (unsigned)(st.st_mode & 0777));
        return DS_EPARSE;
    }
    return DS_OK;
}

static int set_token(dconfig_t *c, const char *path, long line, const char *k, const char *v, ds_error_t *err)
{
    if (c->token_line) {
        ds_error_set(err, path, line, k, "the read token is already set on line %d (read_token or read_token_file, "
                     "once)", c->token_line);
        return DS_EPARSE;
    }
    int rc;
    if (!strcmp(k, "read_token")) {
        if ((rc = private_file(path, line, k, path, err)) || (rc = token_value(path, line, k, v, c->read_token,
                                                                               sizeof c->read_token, err)))
            return rc;
    } else {
        if ((rc = str(path, line, k, v, c->read_token_file, sizeof c->read_token_file, err))) return rc;
        if (!v[0]) {
            ds_error_set(err, path, line, k, "empty path");
            return DS_EPARSE;
        }
        if ((rc = private_file(path, line, k, v, err))) return rc;
        FILE *f = fopen(v, "r");
        char buf[256] = "";
        if (!f) {
            ds_error_set(err, path, line, k, "cannot open '%s': %s", v, strerror(errno));
            return DS_EPARSE;
        }
        if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
        fclose(f);
        if ((rc = token_value(path, line, k, trim(buf), c->read_token, sizeof c->read_token, err))) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            ds_error_set(err, path, line, k, "first line of '%s': %s", v, m);
            return rc;
        }
    }
    c->token_line = (int)line;
    return DS_OK;
}

static int set_key(dconfig_t *c, const char *path, long line, const char *k, const char *v, ds_error_t *err)
{
    double x;
    int rc;
    if (!strncmp(k, "policy.", 7)) {
        if (c->nparams == DC_MAX_PARAMS) {
            ds_error_set(err, path, line, k, "more than %d policy parameters", DC_MAX_PARAMS);
            return DS_EPARSE;
        }
        if ((rc = str(path, line, k, k + 7, c->pkeys[c->nparams], sizeof c->pkeys[0], err)) ||
            (rc = str(path, line, k, v, c->pvals[c->nparams], sizeof c->pvals[0], err)))
            return rc;
        c->plines[c->nparams++] = line;
        return DS_OK;
    }
#define STR(name, field) if (!strcmp(k, name)) return str(path, line, k, v, c->field, sizeof c->field, err)
#define NUM(name, field, lo, hi) \
    if (!strcmp(k, name)) { if ((rc = num(path, line, k, v, lo, hi, 0, &x, err))) return rc; c->field = x; return DS_OK; }
#define INT(name, field, lo, hi) \
    if (!strcmp(k, name)) { if ((rc = num(path, line, k, v, lo, hi, 1, &x, err))) return rc; c->field = (int)x; return DS_OK; }
    STR("policy", policy);
    STR("slurm_conf", slurm_conf);
    STR("staging_partition", staging);
    STR("g_partition", g_partition);
    STR("be_partition", be_partition);
    STR("journal", journal);
    STR("interference_profile", interference);
    STR("speeds", speeds);
    NUM("cycle", cycle, 0.1, 86400);
    NUM("poll", poll, 0.05, 3600);
    NUM("missing_rho", missing_rho, 0, 1);
    NUM("default_runtime", default_runtime, 1, 1e9);
    INT("min_history", min_history, 1, 1e6);
    INT("batch_gap", batch_gap, 0, 86400);
    if (!strcmp(k, "runtime_model")) {
        if (!strcmp(v, "boosted") || !strcmp(v, "history")) { c->runtime_model = !strcmp(v, "boosted"); return DS_OK; }
        ds_error_set(err, path, line, k, "expected boosted (the simulator's gradient-boosted model) or history (means "
                     "of log run times per user, tenant, cluster), got '%s'", v);
        return DS_EPARSE;
    }
    INT("gpu_mem_mib", gmem_mib, 1, 1e7);
    INT("default_job_gpu_mem_mib", default_gmem_mib, 0, 1e7);
    INT("k", k, 1, 4);
    INT("gpu_sharing", gpu_sharing, 0, 1);
    INT("repin", repin, 0, 2);
    INT("pin_whole_gpus", pin_whole_gpus, 0, 1);
    NUM("qad_lambda", qad_lambda, 0, 1);
    NUM("qad_theta", qad_theta, 0, 1);
    INT("job_capacity", job_capacity, 16, 1e7);
    NUM("dispatch_timeout", dispatch_timeout, 1, 86400);
    NUM("grace", grace, 0, 86400);
    if (!strcmp(k, "preempt_signal")) {
        /* a signal a training script can catch to checkpoint; KILL and STOP cannot be caught */
        const char *n = !strncasecmp(v, "SIG", 3) ? v + 3 : v;
        for (int sig = 1; sig < 64; sig++) {
            const char *name = dconfig_signal_name(sig);
            if (name && !strcasecmp(n, name)) { c->preempt_signal = sig; return DS_OK; }
        }
        ds_error_set(err, path, line, k, "expected one of TERM, INT, HUP, QUIT, USR1, USR2 (a signal a script can "
                     "catch), got '%s'", v);
        return DS_EPARSE;
    }
    INT("lease_ttl", lease_ttl, 3, 600); /* etcd's shortest lease is 2 s, and a period keeps 1 s for the takeover */
    STR("lease_key", lease_key);
    STR("lease_name", lease_name);
    if (!strcmp(k, "lease_etcd")) {
        if (*v && strncmp(v, "http://", 7) && strncmp(v, "https://", 8)) {
            ds_error_set(err, path, line, k, "expected an etcd client URL (http://HOST:PORT), got '%s'", v);
            return DS_EPARSE;
        }
        if (strlen(v) >= sizeof c->lease_etcd) {
            ds_error_set(err, path, line, k, "longer than %zu characters", sizeof c->lease_etcd - 1);
            return DS_EPARSE;
        }
        snprintf(c->lease_etcd, sizeof c->lease_etcd, "%s", v);
        size_t n = strlen(c->lease_etcd);
        while (n && c->lease_etcd[n - 1] == '/') c->lease_etcd[--n] = 0;
        return DS_OK;
    }
    INT("verbose", verbose, 0, 2);
    if (!strcmp(k, "trust_accounts")) {
        if (!strcmp(v, "yes") || !strcmp(v, "1")) c->trust_accounts = 1;
        else if (!strcmp(v, "no") || !strcmp(v, "0")) c->trust_accounts = 0;
        else {
            ds_error_set(err, path, line, k, "expected yes or no, got '%s'", v);
            return DS_EPARSE;
        }
        return DS_OK;
    }
    NUM("status_window", status_window, 60, 30 * 86400);
#undef STR
#undef NUM
#undef INT
    if (!strcmp(k, "read_token") || !strcmp(k, "read_token_file")) return set_token(c, path, line, k, v, err);
    char terr[200];
    int tr = tel_config_set(&c->tel, k, v, terr, sizeof terr);
    if (tr < 0) {
        ds_error_set(err, path, line, k, "%s", terr);
        return DS_EPARSE;
    }
    if (tr == 0) return DS_OK;
    if (!strcmp(k, "listen")) {
        /* "127.0.0.1:9464", or "off" */
        if (!strcmp(v, "off")) { c->listen_port = 0; return DS_OK; }
        const char *colon = strrchr(v, ':');
        char *end;
        long port = colon ? strtol(colon + 1, &end, 10) : -1;
        char addr[64];
        struct in_addr ia;
        if (!colon || colon == v || *end || colon[1] == '\0' || port < 1 || port > 65535 ||
            (size_t)(colon - v) >= sizeof addr) {
            ds_error_set(err, path, line, k, "expected ADDRESS:PORT (or off), got '%s'", v);
            return DS_EPARSE;
        }
        snprintf(addr, sizeof addr, "%.*s", (int)(colon - v), v);
        /* the same test the HTTP server applies at start, so --check cannot pass what start refuses */
        if (inet_pton(AF_INET, addr, &ia) != 1) {
            ds_error_set(err, path, line, k, "'%s' is not an IPv4 address (as 127.0.0.1:9464)", addr);
            return DS_EPARSE;
        }
        snprintf(c->listen_addr, sizeof c->listen_addr, "%s", addr);
        c->listen_port = (int)port;
        return DS_OK;
    }
    ds_error_set(err, path, line, k, "unknown key");
    return DS_EPARSE;
}

/* A Slurm account, user or group name: letters, digits, '_', '.', '-' (no spaces, no control characters:
 * they reach logs and pages). */
static int name_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-') return 0;
    return 1;
}

/* "tenant ACCOUNT QUOTA_GPUS [users=NAME,@GROUP,...]" */
static int tenant_line(dconfig_t *c, const char *path, long line, const char *rest, ds_error_t *err)
{
    char name[128], qs[320], us[320], extra[8];
    long q = -1;
    int n = sscanf(rest, "%127s %319s %319s %7s", name, qs, us, extra);
    dc_tenant_t typed;
    memset(&typed, 0, sizeof typed);
    if ((n == 2 || n == 3) && strchr(qs, ':')) {
        /* per GPU type: TYPE:N,TYPE:N (the model types of the nodes' Gres) */
        char buf[320], *save = NULL;
        snprintf(buf, sizeof buf, "%s", qs);
        q = 0;
        for (char *it = strtok_r(buf, ",", &save); it && q >= 0; it = strtok_r(NULL, ",", &save)) {
            char *c = strchr(it, ':'), *qe;
            if (!c || c == it || (size_t)(c - it) >= sizeof typed.tq_name[0] || typed.ntq == DC_MAX_QTYPES) {
                q = -1;
                break;
            }
            *c = 0;
            errno = 0;
            long v = strtol(c + 1, &qe, 10);
            int dup = 0;
            for (int k = 0; k < typed.ntq; k++) dup |= !strcasecmp(typed.tq_name[k], it);
            if (errno || qe == c + 1 || *qe || v < 0 || v > 1000000 || !name_ok(it, 31) || dup) {
                ds_error_set(err, path, line, "tenant", "quota '%.100s': expected TYPE:GPUS,... (each type once, GPUs "
                             "0..1000000)", qs);
                return DS_EPARSE;
            }
            snprintf(typed.tq_name[typed.ntq], sizeof typed.tq_name[0], "%s", it);
            typed.tq[typed.ntq++] = (int)v;
            q += v;
        }
        if (q < 0 || q > 1000000 || !typed.ntq || qs[0] == ',' || qs[strlen(qs) - 1] == ',' || strstr(qs, ",,")) {
            ds_error_set(err, path, line, "tenant", "quota '%.100s': expected TYPE:GPUS,... (at most %d types)", qs,
                         DC_MAX_QTYPES);
            return DS_EPARSE;
        }
    } else if (n == 2 || n == 3) {
        char *qe;
        errno = 0;
        q = strtol(qs, &qe, 10);
        if (errno || qe == qs || *qe) q = -1;
    }
    if ((n != 2 && n != 3) || q < 0 || q > 1000000 || (n == 3 && strncmp(us, "users=", 6))) {
        ds_error_set(err, path, line, "tenant",
                     "expected 'tenant ACCOUNT QUOTA_GPUS|TYPE:GPUS,... [users=NAME,@GROUP,...]'");
        return DS_EPARSE;
    }
    if (strlen(name) >= sizeof c->tenants[0].name || c->ntenants == DC_MAX_TENANTS) {
        ds_error_set(err, path, line, "tenant", "name too long or more than %d tenants", DC_MAX_TENANTS);
        return DS_EPARSE;
    }
    if (!name_ok(name, 63)) {
        ds_error_set(err, path, line, "tenant", "the account name may hold only letters, digits, '_', '.' and '-'");
        return DS_EPARSE;
    }
    for (char *p = name; *p; p++) *p = (char)tolower((unsigned char)*p); /* Slurm lower-cases accounts */
    for (int i = 0; i < c->ntenants; i++)
        if (!strcmp(c->tenants[i].name, name)) {
            ds_error_set(err, path, line, "tenant", "tenant '%s' defined twice", name);
            return DS_EPARSE;
        }
    dc_tenant_t *t = &c->tenants[c->ntenants];
    memset(t, 0, sizeof *t);
    if (n == 3) {
        const char *list = us + 6;
        if (strlen(list) >= sizeof t->members) {
            ds_error_set(err, path, line, "users", "list longer than %zu characters", sizeof t->members - 1);
            return DS_EPARSE;
        }
        char buf[sizeof t->members];
        snprintf(buf, sizeof buf, "%s", list);
        char *save = NULL;
        int k = 0;
        for (char *m = strtok_r(buf, ",", &save); m; m = strtok_r(NULL, ",", &save), k++)
            if (!name_ok(m[0] == '@' ? m + 1 : m, 63)) {
                ds_error_set(err, path, line, "users", "name %d of the list is not a user name or @group (letters, "
                             "digits, '_', '.', '-')", k + 1);
                return DS_EPARSE;
            }
        if (k == 0 || list[0] == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,")) {
            ds_error_set(err, path, line, "users", "expected NAME,@GROUP,... (no empty names), got '%s'", list);
            return DS_EPARSE;
        }
        memcpy(t->members, list, strlen(list) + 1); /* shorter than members: checked above */
    }
    snprintf(t->name, sizeof t->name, "%.63s", name);
    t->quota = (int)q;
    t->ntq = typed.ntq;
    memcpy(t->tq_name, typed.tq_name, sizeof t->tq_name);
    memcpy(t->tq, typed.tq, sizeof t->tq);
    t->line = (int)line;
    c->ntenants++;
    return DS_OK;
}

/* Refuses a file others may change: writable by group or others, or owned by someone else than root
 * and the caller. */
static int safe_owner(FILE *f, const char *path, ds_error_t *err)
{
    struct stat st;
    if (fstat(fileno(f), &st)) {
        ds_error_set(err, path, 0, NULL, "cannot stat: %s", strerror(errno));
        return DS_EIO;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        ds_error_set(err, path, 0, NULL, "writable by %s (mode %03o): whoever can write it sets every tenant's quota; "
                     "chmod go-w", st.st_mode & S_IWOTH ? "every user" : "its group", (unsigned)(st.st_mode & 0777));
        return DS_EPARSE;
    }
    if (st.st_uid != 0 && st.st_uid != geteuid()) {
        struct passwd pw, *res = NULL;
        char buf[1024];
        int known = getpwuid_r(st.st_uid, &pw, buf, sizeof buf, &res) == 0 && res;
        ds_error_set(err, path, 0, NULL, "owned by %s%s (uid %u), not by root or the daemon's user (uid %u): that user "
                     "could rewrite it; chown it", known ? "user " : "another user", known ? pw.pw_name : "",
                     (unsigned)st.st_uid, (unsigned)geteuid());
        return DS_EPARSE;
    }
    return DS_OK;
}

int dconfig_read(dconfig_t *c, const char *path, ds_error_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        ds_error_set(err, path, 0, NULL, "cannot open: %s", strerror(errno));
        return DS_EIO;
    }
    int prc = safe_owner(f, path, err);
    if (prc) {
        fclose(f);
        return prc;
    }
    snprintf(c->path, sizeof c->path, "%s", path);
    char buf[1024];
    long line = 0;
    int rc = DS_OK;
    while (rc == DS_OK && fgets(buf, sizeof buf, f)) {
        line++;
        if (!strchr(buf, '\n') && !feof(f)) {
            ds_error_set(err, path, line, NULL, "line longer than %zu characters", sizeof buf - 2);
            rc = DS_EPARSE;
            break;
        }
        char *hash = strchr(buf, '#');
        if (hash) *hash = 0;
        char *s = trim(buf);
        if (!*s) continue;
        if (!strncmp(s, "tenant", 6) && isspace((unsigned char)s[6])) {
            rc = tenant_line(c, path, line, s + 6, err);
            if (rc) break;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            ds_error_set(err, path, line, NULL, "expected 'key = value' or 'tenant ACCOUNT QUOTA_GPUS'");
            rc = DS_EPARSE;
            break;
        }
        *eq = 0;
        rc = set_key(c, path, line, trim(s), trim(eq + 1), err);
    }
    fclose(f);
    if (rc == DS_OK && c->ntenants == 0) {
        ds_error_set(err, path, 0, "tenant", "no tenants defined (add 'tenant ACCOUNT QUOTA_GPUS' lines)");
        rc = DS_EPARSE;
    }
    return rc;
}

int dconfig_check_identity(const dconfig_t *c, int enforced, ds_error_t *err)
{
    if (enforced || c->trust_accounts) return DS_OK;
    for (int i = 0; i < c->ntenants; i++)
        if (!c->tenants[i].members[0]) {
            ds_error_set(err, c->path, c->tenants[i].line, "tenant",
                         "tenant '%s' lists no members (users=NAME,@GROUP,...) and Slurm does not check accounts "
                         "(AccountingStorageEnforce=associations with slurmdbd): any user could charge it with -A; "
                         "list its members, enforce associations, or set trust_accounts = yes",
                         c->tenants[i].name);
            return DS_EPARSE;
        }
    return DS_OK;
}

int dconfig_member(const dc_tenant_t *t, const char *user)
{
    if (!t->members[0]) return 1;
    char buf[sizeof t->members];
    snprintf(buf, sizeof buf, "%s", t->members);
    gid_t groups[256];
    int ngroups = -1; /* looked up at the first @group */
    char *save = NULL;
    for (char *m = strtok_r(buf, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
        if (m[0] != '@') {
            if (!strcmp(m, user)) return 1;
            continue;
        }
        if (ngroups < 0) {
            struct passwd pw, *res = NULL;
            char pb[1024];
            ngroups = 0;
            if (getpwnam_r(user, &pw, pb, sizeof pb, &res) == 0 && res) {
                int n = (int)(sizeof groups / sizeof groups[0]);
                if (getgrouplist(user, pw.pw_gid, groups, &n) >= 0) ngroups = n;
                else ngroups = (int)(sizeof groups / sizeof groups[0]); /* the first 256 */
            }
        }
        struct group gr, *gres = NULL;
        char gb[4096];
        if (getgrnam_r(m + 1, &gr, gb, sizeof gb, &gres) || !gres) continue;
        for (int i = 0; i < ngroups; i++)
            if (groups[i] == gres->gr_gid) return 1;
    }
    return 0;
}

int dconfig_check(const dconfig_t *c, ds_error_t *err)
{
    struct in_addr ia;
    if (c->listen_port && inet_pton(AF_INET, c->listen_addr, &ia) != 1) {
        ds_error_set(err, c->path, 0, "listen", "'%s' is not an IPv4 address", c->listen_addr);
        return DS_EPARSE;
    }
    if (c->ntenants < 1) {
        ds_error_set(err, c->path, 0, "tenant", "no tenants defined (add 'tenant ACCOUNT QUOTA_GPUS' lines)");
        return DS_EPARSE;
    }
    if (!c->journal[0]) {
        ds_error_set(err, c->path, 0, "journal", "empty journal path");
        return DS_EPARSE;
    }
    if (dconfig_listen_public(c) && !c->read_token[0]) {
        ds_error_set(err, c->path, 0, "listen", "%s:%d is not a loopback address: anyone who reaches it would read "
                     "every tenant, user and job; set read_token_file (or read_token), or listen on 127.0.0.1",
                     c->listen_addr, c->listen_port);
        return DS_EPARSE;
    }
    return DS_OK;
}

int dconfig_listen_public(const dconfig_t *c)
{
    struct in_addr ia;
    if (!c->listen_port || inet_pton(AF_INET, c->listen_addr, &ia) != 1) return 0;
    return (ntohl(ia.s_addr) >> 24) != 127;
}

int dconfig_check_bind(const dconfig_t *c, ds_error_t *err)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)c->listen_port);
    if (!c->listen_port || inet_pton(AF_INET, c->listen_addr, &sa.sin_addr) != 1) return DS_OK;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return DS_OK; /* nothing learned: start will tell */
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* as the HTTP server binds */
    int rc = bind(s, (struct sockaddr *)&sa, sizeof sa) ? errno : 0;
    close(s);
    if (rc == 0) return DS_OK;
    if (rc == EADDRINUSE) return 1; /* perhaps the running daemon itself: the caller warns */
    ds_error_set(err, c->path, 0, "listen", "cannot listen on %s:%d: %s", c->listen_addr, c->listen_port,
                 rc == EADDRNOTAVAIL ? "not an address of this machine" : strerror(rc));
    return DS_EPARSE;
}

const char *dconfig_signal_name(int sig)
{
    switch (sig) {
    case SIGTERM: return "TERM";
    case SIGINT: return "INT";
    case SIGHUP: return "HUP";
    case SIGQUIT: return "QUIT";
    case SIGUSR1: return "USR1";
    case SIGUSR2: return "USR2";
    default: return NULL;
    }
}

void dconfig_print(FILE *f, const dconfig_t *c)
{
    fprintf(f, "# effective configuration of %s (defaults included)\n", c->path[0] ? c->path : "(defaults)");
    fprintf(f, "policy = %s\n", c->policy);
    fprintf(f, "cycle = %g\npoll = %g\ndispatch_timeout = %g\n", c->cycle, c->poll, c->dispatch_timeout);
    fprintf(f, "grace = %g\npreempt_signal = %s\n", c->grace, dconfig_signal_name(c->preempt_signal));
    fprintf(f, "lease_etcd = %s\nlease_key = %s\nlease_name = %s\nlease_ttl = %d\n", c->lease_etcd, c->lease_key,
            c->lease_name, c->lease_ttl);
    fprintf(f, "slurm_conf = %s\nstaging_partition = %s\ng_partition = %s\nbe_partition = %s\n", c->slurm_conf,
            c->staging, c->g_partition, c->be_partition);
    fprintf(f, "k = %d\ngpu_sharing = %d\ngpu_mem_mib = %d\ndefault_job_gpu_mem_mib = %d\njob_capacity = %d\n", c->k,
            c->gpu_sharing, c->gmem_mib, c->default_gmem_mib, c->job_capacity);
    fprintf(f, "repin = %d\npin_whole_gpus = %d\n", c->repin, c->pin_whole_gpus);
    fprintf(f, "qad_lambda = %g\nqad_theta = %g\n", c->qad_lambda, c->qad_theta);
    fprintf(f, "journal = %s\ndefault_runtime = %g\nmin_history = %d\nruntime_model = %s\n", c->journal,
            c->default_runtime, c->min_history, c->runtime_model ? "boosted" : "history");
    fprintf(f, "batch_gap = %d\n", c->batch_gap);
    fprintf(f, "interference_profile = %s\nmissing_rho = %g\n", c->interference, c->missing_rho);
    fprintf(f, "speeds = %s\n", c->speeds);
    if (c->listen_port) fprintf(f, "listen = %s:%d\n", c->listen_addr, c->listen_port);
    else fprintf(f, "listen = off\n");
    /* the secret itself never goes to a terminal or a log */
    if (c->read_token_file[0]) fprintf(f, "read_token_file = %s\n", c->read_token_file);
    else if (c->read_token[0]) fprintf(f, "# read_token = (set on line %d, %zu characters, not shown)\n", c->token_line,
                                       strlen(c->read_token));
    else fprintf(f, "# read_token: none (the HTTP endpoints are open to whoever reaches %s)\n",
                 c->listen_port ? c->listen_addr : "them");
    fprintf(f, "status_window = %g\nverbose = %d\n", c->status_window, c->verbose);
    fprintf(f, "telemetry = %s\nprometheus_url = %s\nprometheus_query = %s\ntelemetry_job_label = %s\n"
               "progress_dir = %s\ntelemetry_stale = %g\ntelemetry_timeout = %g\n", tel_kind_name(c->tel.kind),
            c->tel.url, c->tel.query, c->tel.job_label, c->tel.dir, c->tel.stale, c->tel.timeout);
    if (c->tel.lag < 0) fprintf(f, "telemetry_lag = auto\n");
    else fprintf(f, "telemetry_lag = %g\n", c->tel.lag);
    fprintf(f, "trust_accounts = %s\n", c->trust_accounts ? "yes" : "no");
    for (int i = 0; i < c->ntenants; i++) {
        const dc_tenant_t *t = &c->tenants[i];
        fprintf(f, "tenant %s ", t->name);
        if (!t->ntq) fprintf(f, "%d", t->quota);
        for (int k = 0; k < t->ntq; k++) fprintf(f, "%s%s:%d", k ? "," : "", t->tq_name[k], t->tq[k]);
        fprintf(f, "%s%s\n", t->members[0] ? " users=" : "", t->members);
    }
    for (int i = 0; i < c->nparams; i++) fprintf(f, "policy.%s = %s\n", c->pkeys[i], c->pvals[i]);
}

static void note(char *restart, size_t n, const char *key)
{
    size_t l = strlen(restart);
    if (l + strlen(key) + 3 < n) snprintf(restart + l, n - l, "%s%s", l ? ", " : "", key);
}

void dconfig_reload_merge(const dconfig_t *cur, dconfig_t *next, char *restart, size_t n)
{
    restart[0] = 0;
#define KEEP_S(field, key) if (strcmp(cur->field, next->field)) { note(restart, n, key); memcpy(next->field, cur->field, sizeof next->field); }
#define KEEP_N(field, key) if (cur->field != next->field) { note(restart, n, key); next->field = cur->field; }
    KEEP_S(policy, "policy");
    KEEP_S(slurm_conf, "slurm_conf");
    KEEP_S(staging, "staging_partition");
    KEEP_S(g_partition, "g_partition");
    KEEP_S(be_partition, "be_partition");
    KEEP_S(journal, "journal");
    KEEP_S(interference, "interference_profile");
    KEEP_S(speeds, "speeds");
    KEEP_N(missing_rho, "missing_rho");
    KEEP_N(default_runtime, "default_runtime");
    KEEP_N(min_history, "min_history");
    KEEP_N(runtime_model, "runtime_model");
    KEEP_N(batch_gap, "batch_gap");
    KEEP_N(gmem_mib, "gpu_mem_mib");
    KEEP_N(k, "k");
    KEEP_N(gpu_sharing, "gpu_sharing");
    KEEP_N(pin_whole_gpus, "pin_whole_gpus");
    KEEP_N(job_capacity, "job_capacity");
    KEEP_N(status_window, "status_window");
    KEEP_S(lease_etcd, "lease_etcd");
    KEEP_S(lease_key, "lease_key");
    KEEP_S(lease_name, "lease_name");
    KEEP_N(lease_ttl, "lease_ttl");
    if (memcmp(&cur->tel, &next->tel, sizeof cur->tel)) {
        note(restart, n, "telemetry*");
        next->tel = cur->tel;
    }
    if (strcmp(cur->listen_addr, next->listen_addr) || cur->listen_port != next->listen_port) {
        note(restart, n, "listen");
        memcpy(next->listen_addr, cur->listen_addr, sizeof next->listen_addr);
        next->listen_port = cur->listen_port;
    }
    int same = cur->nparams == next->nparams;
    for (int i = 0; same && i < cur->nparams; i++)
        same = !strcmp(cur->pkeys[i], next->pkeys[i]) && !strcmp(cur->pvals[i], next->pvals[i]);
    if (!same) {
        /* the policy copied its parameters when the engine was made: new ones need a new policy config */
        note(restart, n, "policy.*");
        next->nparams = cur->nparams;
        memcpy(next->pkeys, cur->pkeys, sizeof next->pkeys);
        memcpy(next->pvals, cur->pvals, sizeof next->pvals);
        memcpy(next->plines, cur->plines, sizeof next->plines);
    }
#undef KEEP_S
#undef KEEP_N
}
