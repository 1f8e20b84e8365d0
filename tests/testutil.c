/* testutil.c: temp files, hand-made traces and one-call simulation runs for the tests. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deepshare/policy.h"

const char *tu_write_temp(const char *name, const char *text)
{
    static char paths[8][512];
    static int slot;
    char *p = paths[slot++ % 8];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(p, 512, "%s/ds_test_%d_%s", dir, (int)getpid(), name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

const char *tu_data(const char *rel)
{
    static char p[1024];
    const char *d = getenv("DS_DATA_DIR");
    if (!d) d = "../shared/data";
    snprintf(p, sizeof p, "%s/%s", d, rel);
    return access(p, R_OK) == 0 ? p : NULL;
}

void tu_trace(ds_trace_t *t, const char *tenants, const char *jobs)
{
    ds_trace_init(t);
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", tenants);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *c = strchr(tok, ':');
        assert_non_null(c);
        *c = '\0';
        ds_trace_add_tenant(t, tok, atoi(c + 1));
    }
    const char *p = jobs;
    long line = 1;
    while (*p) {
        long long id, gpus, submit, dur;
        char ten[64];
        int n = 0;
        if (sscanf(p, " %lld %63s %lld %lld %lld%n", &id, ten, &gpus, &submit, &dur, &n) != 5) break;
        ds_job_t *j = ds_trace_add_job(t);
        j->id = id;
        j->tenant = ds_trace_find_tenant(t, ten);
        assert_true(j->tenant >= 0);
        j->user = ds_strtab_intern(&t->users, "u");
        j->gpus = (int32_t)gpus;
        j->submit = submit;
        j->duration = dur;
        j->estimate = (double)dur;
        j->line = line++;
        p += n;
        while (*p == ' ' || *p == '\n' || *p == ';') p++;
    }
    snprintf(t->source, sizeof t->source, "test");
}

void tu_run(const ds_trace_t *t, const char *policy, ds_mode_t mode, ds_sim_result_t *r)
{
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = mode;
    c.policy = ds_policy_find(policy);
    assert_non_null(c.policy);
    tu_sim(t, &c, r);
}

void *tu_policy_config(const ds_policy_ops_t *ops, const char *const *kv)
{
    void *pc = ops->config_new ? ops->config_new() : NULL;
    for (int i = 0; kv && kv[i]; i += 2) {
        ds_error_t err;
        assert_non_null(pc);
        assert_int_equal(ops->config_set(pc, kv[i], kv[i + 1], &err), DS_OK);
    }
    return pc;
}

void tu_run_kv(const ds_trace_t *t, const char *policy, ds_mode_t mode, const char *const *kv, ds_sim_result_t *r)
{
    const ds_policy_ops_t *ops = ds_policy_find(policy);
    assert_non_null(ops);
    void *pc = tu_policy_config(ops, kv);
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = mode;
    c.policy = ops;
    c.policy_config = pc;
    tu_sim(t, &c, r);
    if (pc) ops->config_free(pc);
}

void tu_sim(const ds_trace_t *t, ds_sim_config_t *c, ds_sim_result_t *r)
{
    c->check_invariants = 1;
    ds_error_t err;
    ds_error_clear(&err);
    int rc = ds_sim_run(t, c, r, &err);
    if (rc) fprintf(stderr, "sim failed: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

char *tu_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    if (len) *len = got;
    return b;
}

void tu_expect_error(const ds_error_t *err, const char *file_part, long line, const char *field, const char *needle)
{
    if (err->line != line || strcmp(err->field, field) || !strstr(err->msg, needle) || !strstr(err->file, file_part))
        fprintf(stderr, "got file '%s' line %ld field '%s' msg '%s'\n", err->file, err->line, err->field, err->msg);
    assert_int_equal(err->line, line);
    assert_string_equal(err->field, field);
    assert_non_null(strstr(err->msg, needle));
    assert_non_null(strstr(err->file, file_part));
}

void tu_make_dir(const char *prefix, char *dir, size_t n)
{
    const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, n, "%s/%s_%d", t, prefix, (int)getpid());
    mkdir(dir, 0777);
}

int tu_remove_dir(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int tu_venus(ds_trace_t *t)
{
    ds_trace_init(t);
    const char *p = tu_data("venus/vc_config.csv");
    if (!p) return 0;
    char vc[1024], jobs[1024];
    snprintf(vc, sizeof vc, "%s", p);
    p = tu_data("venus/venus_sept_jobs.csv");
    if (!p) return 0;
    snprintf(jobs, sizeof jobs, "%s", p);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_trace_read_tenants(t, vc, 8, &err), 0);
    assert_int_equal(ds_trace_read_jobs(t, jobs, &err), 0);
    return 1;
}
