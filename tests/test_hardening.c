/* test_hardening.c: one test per class of input fault found by fuzzing (issue 13) and of the CLI's trust
 * boundary (issue 24): each asserts that the reader refuses the input with file, line and column, or that
 * accepted input stays bounded. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "deepshare/coloc.h"
#include "deepshare/csv.h"
#include "deepshare/lucid.h"
#include "deepshare/models.h"
#include "deepshare/policy.h"
#include "deepshare/report.h"

static const char generic_tenants[] = "tenant,quota_gpus\nA,8\nB,8\n";

/* Reads tenants (text) and, when jobs is not NULL, jobs; returns the first failing code with err filled. */
static int read_both(ds_trace_t *t, const char *tenants, const char *jobs, ds_error_t *err)
{
    ds_trace_init(t);
    ds_error_clear(err);
    int rc = ds_trace_read_tenants(t, tu_write_temp("h_tenants.csv", tenants), 8, err);
    if (rc || !jobs) return rc;
    return ds_trace_read_jobs(t, tu_write_temp("h_jobs.csv", jobs), err);
}

static void expect_reject(const char *tenants, const char *jobs, long line, const char *field, const char *needle)
{
    ds_trace_t t;
    ds_error_t err;
    int rc = read_both(&t, tenants, jobs, &err);
    if (rc == DS_OK || err.line != line || strcmp(err.field, field) || !strstr(err.msg, needle))
        fail_msg("rc %d, line %ld, field '%s', msg '%s' (wanted line %ld, field '%s', '%s')", rc, err.line, err.field,
                 err.msg, line, field, needle);
    assert_true(err.file[0] != '\0');
    ds_trace_free(&t);
}

/* Class 1 (crash): a tenant file with only a quota column read past the row's last field. */
static void test_tenant_quota_only(void **st)
{
    (void)st;
    expect_reject("quota_gpus\n5\n", NULL, 1, "", "tenant name column");
    expect_reject("num\n", NULL, 1, "", "tenant name column");
}

/* Class 3 (silent nonsense): num x 8 overflowed into a negative or wrapped quota. */
static void test_quota_overflow(void **st)
{
    (void)st;
    expect_reject(",num\nA,1152921504606846976\n", NULL, 2, "num", "above the maximum");
    expect_reject(",num\nA,268435456\n", NULL, 2, "num", "above the maximum");
    expect_reject("tenant,quota_gpus\nA,-8\n", NULL, 2, "quota_gpus", "below the minimum");
    ds_trace_t t;
    ds_error_t err;
    assert_int_equal(read_both(&t, ",num\nA,125000\n", NULL, &err), DS_OK);
    assert_int_equal(t.tenants[0].quota_gpus, 1000000);
    ds_trace_free(&t);
}

/* Class 3: fractional values for integer columns are refused, not truncated; "12.0" (pandas) is 12. */
static void test_fractions_refused(void **st)
{
    (void)st;
    expect_reject("tenant,quota_gpus\nA,2.5\n", NULL, 2, "quota_gpus", "not an integer");
    expect_reject(generic_tenants, "job_id,tenant,gpus,submit,duration\n1,A,1.5,0,10\n", 2, "gpus", "not an integer");
    expect_reject(generic_tenants, "job_id,tenant,gpus,submit,duration,batchsize\n1,A,1,0,10,3.25\n", 2, "batchsize",
                  "not an integer");
    ds_single_profile_t sp;
    ds_error_t err;
    const char *p = tu_write_temp("h_single.csv", "model,dataset,batchsize,amp,speed,gpu_util,gmem_util,gmem,label\n"
                                                  "m,d,32,0,1,50,20,1000,1.5\n");
    assert_int_equal(ds_single_read(&sp, p, &err), DS_EPARSE);
    assert_string_equal(err.field, "label");
    ds_trace_t t;
    assert_int_equal(read_both(&t, generic_tenants, "job_id,tenant,gpus,submit,duration\n1,A,2.0,0,10\n", &err), DS_OK);
    assert_int_equal(t.jobs[0].gpus, 2);
    ds_trace_free(&t);
}

/* Class 3 / UB: values that would not fit the field they are narrowed to (float-to-int casts, int32). */
static void test_narrowing_refused(void **st)
{
    (void)st;
    ds_single_profile_t sp;
    ds_error_t err;
    const char *p = tu_write_temp("h_single.csv", "model,dataset,batchsize,amp,speed,gpu_util,gmem_util,gmem,label\n"
                                                  "m,d,32,0,1,50,20,1000,1e300\n");
    assert_int_equal(ds_single_read(&sp, p, &err), DS_EPARSE);
    ds_coloc_t c;
    p = tu_write_temp("h_coloc.csv", "model1,dataset1,batchsize1,amp1,speed1,model2,dataset2,batchsize2,amp2,speed2,"
                                     "gpu_util,gmem_util,gmem\nm,d,4294967328,0,0.9,m,d,32,0,0.9,90,50,1000\n");
    assert_int_equal(ds_coloc_read(&c, p, &err), DS_EPARSE);
    assert_string_equal(err.field, "batchsize1");
    assert_int_equal(err.line, 2);
    expect_reject(generic_tenants, "job_id,tenant,gpus,submit,duration,gmem\n1,A,1,0,10,1e300\n", 2, "gmem",
                  "above the maximum");
    ds_trace_t t;
    assert_int_equal(read_both(&t, generic_tenants, "job_id,tenant,gpus,submit,duration\n1,A,1,0,10\n", &err), DS_OK);
    p = tu_write_temp("h_est.csv", "job_id,estimate\n1,1e300\n");
    assert_int_equal(ds_trace_read_estimates(&t, p, 1000, NULL, &err), DS_EPARSE);
    assert_int_equal(err.line, 2);
    ds_trace_free(&t);
    ds_lucid_series_t ls;
    p = tu_write_temp("h_series.csv", "time,pred_gpu_job,pred_gpu_num\n0,1e300,2\n");
    assert_int_equal(ds_lucid_read_series(p, &ls, &err), DS_EPARSE);
    ds_lucid_labels_t ll;
    p = tu_write_temp("h_labels.csv", "model,dataset,batchsize,amp,label\nm,d,32,7,1\n");
    assert_int_equal(ds_lucid_read_labels(p, &ll, &err), DS_EPARSE);
    assert_string_equal(err.field, "amp");
}

/* Class 2 (exhaustion): durations up to 2^40 s and submit spans up to 2^50 s made the series endless. */
static void test_time_bounds(void **st)
{
    (void)st;
    expect_reject(generic_tenants, "job_id,tenant,gpus,submit,duration\n1,A,1,0,1099511627776\n", 2, "duration",
                  "above the maximum");
    expect_reject(generic_tenants, "job_id,tenant,gpus,submit,duration\n1,A,1,1125899906842624,10\n", 2, "submit",
                  "above the maximum");
    expect_reject(generic_tenants, "job_id,tenant,gpus,submit,duration\n1,A,1,0,10\n2,A,1,2147483648,10\n", 3,
                  "submit", "span more than");
    /* the largest accepted duration and span simulate in bounded time and memory */
    ds_trace_t t;
    ds_error_t err;
    char jobs[256];
    snprintf(jobs, sizeof jobs, "job_id,tenant,gpus,submit,duration\n1,A,1,0,%lld\n2,B,1,%lld,%lld\n",
             (long long)DS_MAX_DURATION, (long long)DS_MAX_SPAN, (long long)DS_MAX_DURATION);
    assert_int_equal(read_both(&t, generic_tenants, jobs, &err), DS_OK);
    static const char *const pols[] = {"fifo", "tiresias"};
    for (int i = 0; i < 2; i++) {
        ds_sim_config_t c;
        ds_sim_config_default(&c);
        c.policy = ds_policy_find(pols[i]);
        clock_t t0 = clock();
        ds_sim_result_t r;
        tu_sim(&t, &c, &r);
        assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 20);
        assert_true(r.nseries < 2000000);
        ds_sim_result_free(&r);
    }
    ds_trace_free(&t);
}

/* Class 2: a job asking more CPUs (or memory) than a node has made Tiresias loop and FIFO stall without
 * naming the job; now the run is refused naming job, file, line and column. */
static void test_infeasible_job(void **st)
{
    (void)st;
    ds_trace_t t;
    ds_error_t err;
    assert_int_equal(read_both(&t, generic_tenants,
                               "job_id,tenant,gpus,cpus,submit,duration\n1,A,1,4,0,10\n2,A,1,500,5,10\n3,B,8,800,6,10\n",
                               &err), DS_OK);
    /* every registered policy (src/policy/registry.c) */
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) {
        ds_sim_config_t c;
        ds_sim_config_default(&c);
        c.policy = *p;
        void *pc = c.policy->config_new ? c.policy->config_new() : NULL;
        if (!strcmp(c.policy->name, "lucid")) assert_int_equal(ds_lucid_config_set(pc, "lucid-profiler", "0", &err), DS_OK);
        c.policy_config = pc;
        ds_sim_result_t r;
        ds_error_clear(&err);
        int rc = ds_sim_run(&t, &c, &r, &err);
        ds_sim_result_free(&r);
        if (pc) c.policy->config_free(pc);
        if (rc == DS_OK || err.line != 3 || strcmp(err.field, "cpus") || !strstr(err.msg, "job 2 could never run"))
            fail_msg("%s: rc %d line %ld field '%s' msg '%s'", c.policy->name, rc, err.line, err.field, err.msg);
        assert_non_null(strstr(err.file, "h_jobs.csv"));
    }
    ds_trace_free(&t);
}

/* Class 2: 1e5 tenants took 45 s (quadratic lookup); the index answers in well under a second, and a
 * file at the reader's limit reads fast, one more is refused. */
static void test_many_tenants(void **st)
{
    (void)st;
    ds_trace_t big;
    ds_trace_init(&big);
    clock_t c0 = clock();
    char nm[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(nm, sizeof nm, "t%06d", i);
        assert_int_equal(ds_trace_find_tenant(&big, nm), -1);
        assert_int_equal(ds_trace_add_tenant(&big, nm, 8), i);
    }
    for (int i = 0; i < 100000; i += 7) {
        snprintf(nm, sizeof nm, "t%06d", i);
        assert_int_equal(ds_trace_find_tenant(&big, nm), i);
    }
    assert_true((double)(clock() - c0) / CLOCKS_PER_SEC < 1.0);
    ds_trace_free(&big);
    size_t cap = (size_t)DS_MAX_TENANTS * 32 + 64;
    char *ten = malloc(cap), *jobs = malloc(cap * 2);
    size_t n = (size_t)snprintf(ten, cap, "tenant,quota_gpus\n"), m = (size_t)snprintf(jobs, cap * 2, "job_id,tenant,gpus,submit,duration\n");
    for (int i = 0; i < DS_MAX_TENANTS; i++) {
        n += (size_t)snprintf(ten + n, cap - n, "tenant%05d,8\n", i);
        m += (size_t)snprintf(jobs + m, cap * 2 - m, "%d,tenant%05d,1,%d,10\n", i + 1, DS_MAX_TENANTS - 1 - i, i);
    }
    ds_trace_t t;
    ds_error_t err;
    clock_t t0 = clock();
    assert_int_equal(read_both(&t, ten, jobs, &err), DS_OK);
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
    assert_int_equal(t.ntenants, DS_MAX_TENANTS);
    assert_int_equal(t.jobs[0].tenant, DS_MAX_TENANTS - 1);
    assert_int_equal(ds_trace_find_tenant(&t, "tenant00042"), 42);
    assert_int_equal(ds_trace_find_tenant(&t, "tenant"), -1);
    ds_trace_free(&t);
    /* one more is refused */
    n += (size_t)snprintf(ten + n, cap - n, "extra,1\n");
    expect_reject(ten, NULL, DS_MAX_TENANTS + 2, "tenant", "more than");
    free(ten);
    free(jobs);
}

/* Class 3: a non-UTF-8 name vanished from the JSON; now the reader names the line and byte. */
static void test_utf8_and_bom(void **st)
{
    (void)st;
    expect_reject("tenant,quota_gpus\nA\xff,8\n", NULL, 2, "", "not valid UTF-8");
    expect_reject("tenant,quota_gpus\n\xc0\xafx,8\n", NULL, 2, "", "byte 1 ");          /* overlong */
    expect_reject("tenant,quota_gpus\n\xed\xa0\x80x,8\n", NULL, 2, "", "not valid UTF-8"); /* surrogate */
    /* a UTF-8 BOM (spreadsheets) is skipped instead of hiding the first column's name */
    ds_trace_t t;
    ds_error_t err;
    assert_int_equal(read_both(&t, "\xef\xbb\xbftenant,quota_gpus\nA,8\n",
                               "\xef\xbb\xbfjob_id,tenant,gpus,submit,duration\n1,A,1,0,10\n", &err), DS_OK);
    assert_int_equal(t.njobs, 1);
    ds_trace_free(&t);
    /* valid multi-byte names pass */
    assert_int_equal(read_both(&t, "tenant,quota_gpus\nvc-\xc3\xa9t\xc3\xa9,8\n", NULL, &err), DS_OK);
    ds_trace_free(&t);
}

/* Class 3: --out CSVs did not escape names with commas or quotes. */
static void test_csv_out_escapes(void **st)
{
    (void)st;
    ds_trace_t t;
    ds_error_t err;
    assert_int_equal(read_both(&t, "tenant,quota_gpus\n\"a,b\",8\n\"q\"\"x\",8\n",
                               "job_id,tenant,user,gpus,submit,duration\n1,\"a,b\",\"u,1\",1,0,10\n2,\"q\"\"x\",\" sp\",1,0,10\n",
                               &err), DS_OK);
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.policy = ds_policy_find("fifo");
    ds_sim_result_t r;
    tu_sim(&t, &c, &r);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/ds_hard_out_%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    assert_int_equal(ds_report_write_csv(dir, &t, &r, &err), DS_OK);
    /* read back with the project's own reader: every row has the header's field count, names intact */
    static const char *const files[] = {"jobs.csv", "tenants.csv", "qad.csv"};
    for (int i = 0; i < 3; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        ds_csv_t f;
        assert_int_equal(ds_csv_open(&f, p, &err), DS_OK);
        assert_int_equal(ds_csv_next(&f, &err), 1);
        int nc = f.nfields, rows = 0, rc;
        if (i == 2) assert_int_equal(ds_csv_col(&f, "a,b_qad"), 1);
        while ((rc = ds_csv_row(&f, nc, &err)) > 0) {
            if (i == 0 && rows == 0) {
                assert_string_equal(f.fields[1], "a,b");
                assert_string_equal(f.fields[2], "u,1");
            }
            if (i == 1 && rows == 1) assert_string_equal(f.fields[0], "q\"x");
            rows++;
        }
        assert_int_equal(rc, 0);
        assert_true(rows >= (i == 2 ? 1 : 2));
        ds_csv_close(&f);
        unlink(p);
    }
    rmdir(dir);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* Class 3: --config lines over 1,023 characters were split and their tail parsed as a parameter. */
static void test_long_config_line(void **st)
{
    (void)st;
    const char *bin = getenv("DS_BIN");
    if (!bin) skip();
    size_t n = 3000;
    char *text = malloc(n + 64);
    int k = snprintf(text, n + 64, "cycle = 60 # ");
    memset(text + k, 'x', n - (size_t)k);
    snprintf(text + n - 12, 64, "\ncycle=30\n");
    /* the tail of the comment would have been read as a line of its own: "xx...x\n" has no '=' */
    const char *cfg = tu_write_temp("h_long.conf", text);
    free(text);
    const char *tn = tu_write_temp("h_t.csv", generic_tenants);
    char tnp[512];
    snprintf(tnp, sizeof tnp, "%s", tn);
    const char *jb = tu_write_temp("h_j.csv", "job_id,tenant,gpus,submit,duration\n1,A,1,0,10\n");
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "'%s' simulate --policy deepshare --trace '%s' --vc-config '%s' --config '%s' >/dev/null 2>&1",
             bin, jb, tnp, cfg);
    int st2 = system(cmd);
    assert_true(WIFEXITED(st2));
    assert_int_equal(WEXITSTATUS(st2), 0);
}

/* Issue 24, class 1: a reader that checked its line bound only after reading the whole line grew to the
 * address-space limit on a file without line breaks, and one that loaded the whole file before looking at its
 * first byte did so on any large file. Each reader is fed from a FIFO that never ends (up to 256 MiB, a prefix
 * then one byte repeated); the bytes it took before closing show it stopped at its bound while reading. */
static long feed_fifo(const char *fifo, const char *cmd, const char *prefix, char fill, int *status)
{
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    signal(SIGPIPE, SIG_IGN);
    int fd = -1;
    for (int i = 0; i < 2000 && fd < 0; i++) { /* the reader opens the FIFO once it starts: up to 20 s */
        fd = open(fifo, O_WRONLY | O_NONBLOCK);
        if (fd < 0) usleep(10000);
    }
    long written = -1;
    if (fd >= 0) {
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        static char chunk[65536];
        memset(chunk, fill, sizeof chunk);
        written = (long)write(fd, prefix, strlen(prefix));
        while (written < (256L << 20)) {
            ssize_t n = write(fd, chunk, sizeof chunk);
            if (n <= 0) break; /* EPIPE: the reader closed it */
            written += n;
        }
        close(fd);
    } else {
        kill(pid, SIGKILL);
    }
    int st;
    waitpid(pid, &st, 0);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    unlink(fifo);
    signal(SIGPIPE, SIG_DFL);
    return written;
}

static void test_readers_bounded_while_reading(void **st)
{
    (void)st;
    const char *bin = getenv("DS_BIN");
    if (!bin) skip();
    char dir[512];
    tu_make_dir("h24", dir, sizeof dir);
    char fifo[600], tn[600], jb[600], out[600], log[600];
    snprintf(fifo, sizeof fifo, "%s/observed.csv", dir); /* replay-live --score reads DIR/observed.csv */
    snprintf(tn, sizeof tn, "%s/t.csv", dir);
    snprintf(jb, sizeof jb, "%s/j.csv", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(log, sizeof log, "%s/err.txt", dir);
    FILE *f = fopen(tn, "w");
    fputs(generic_tenants, f);
    fclose(f);
    f = fopen(jb, "w");
    fputs("job_id,tenant,gpus,submit,duration\n1,A,1,0,10\n", f);
    fclose(f);
    static const struct {
        const char *args, *prefix;
        char fill;
        long bound;        /* the reader's own bound */
        const char *needle; /* in its message */
        int code;          /* exit status: 1 bad input, 2 bad option (--config) */
    } cases[] = {
        {"simulate --policy fifo --vc-config '%2$s' --trace '%1$s'", "", 'a', 1 << 20, "line longer than 1048576 bytes", 1},
        {"simulate --policy fifo --vc-config '%2$s' --trace '%1$s'", "job_id,", '\0', 1 << 20, "NUL byte", 1},
        {"simulate --policy fifo --vc-config '%1$s' --trace '%3$s'", "tenant,quota_gpus\n", 'x', 1 << 20, "line longer", 1},
        {"simulate --policy deepshare --vc-config '%2$s' --trace '%3$s' --config '%1$s'", "cycle = 60 # ", 'x', 65536,
         "line longer than 65536", 2},
        {"import helios '%1$s' --out '%4$s'", "job_id,user,vc,gpu_num,submit_time,duration\n", 'a', 1 << 20, "line longer", 1},
        {"import philly '%1$s' --out '%4$s'", "", '\0', 0, "not Philly's cluster_job_log", 1},
        {"import philly '%1$s' --out '%4$s'", "[{\"jobid\": \"", 'a', 16 << 20, "longer than 16777216 bytes", 1},
        {"import philly '%1$s' --out '%4$s'", "[", ' ', 0, "not closed", 1}, /* blanks: 256 MiB are read, in bounded memory */
        {"import pai '%1$s' '%3$s' --out '%4$s'", "", 'a', 1 << 20, "line longer", 1},
        {"replay-live --trace '%3$s' --vc-config '%2$s' --score --out '%5$s'", "job_id,submit,start,end,node,class,last\n1,0,",
         '1', 1 << 20, "line longer", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[2000], cmd[3000];
        snprintf(args, sizeof args, cases[i].args, fifo, tn, jb, out, dir);
        snprintf(cmd, sizeof cmd, "exec '%s' %s >/dev/null 2>'%s'", bin, args, log);
        int status;
        long took = feed_fifo(fifo, cmd, cases[i].prefix, cases[i].fill, &status);
        char *msg = tu_slurp(log, NULL);
        fprintf(stderr, "[%s] took %ld bytes, exit %d: %s", args, took, status, msg ? msg : "");
        assert_int_equal(status, cases[i].code);
        assert_non_null(msg);
        assert_non_null(strstr(msg, cases[i].needle));
        /* the pipe holds 64 KiB, the reader a 64 KiB block: beyond its bound it read nothing more */
        if (cases[i].bound) assert_true(took < cases[i].bound + (1 << 20));
        free(msg);
    }
    tu_remove_dir(dir);
}

/* Issue 24, class 5: --synth-jobs 10^8 was accepted and took 98 s to abort at an 8 GB limit; quotas adding up
 * to 10^9 GPUs aborted at once. Sizes are now checked against the memory there is before anything is built
 * (DS_MEM_LIMIT stands in for a smaller machine, the same in the release and sanitizer builds). */
static void test_sizes_fit(void **st)
{
    (void)st;
    const char *bin = getenv("DS_BIN");
    if (!bin) skip();
    char dir[512];
    tu_make_dir("h24fit", dir, sizeof dir);
    char tn[600], jb[600], log[600];
    snprintf(tn, sizeof tn, "%s/t.csv", dir);
    snprintf(jb, sizeof jb, "%s/j.csv", dir);
    snprintf(log, sizeof log, "%s/err.txt", dir);
    FILE *f = fopen(tn, "w");
    fputs("tenant,quota_gpus\n", f);
    for (int i = 0; i < 1000; i++) fprintf(f, "t%d,1000000\n", i);
    fclose(f);
    f = fopen(jb, "w");
    fputs("job_id,tenant,gpus,submit,duration\n1,t0,1,0,10\n", f);
    fclose(f);
    static const struct {
        const char *args, *needle;
    } cases[] = {
        {"simulate --policy fifo --synth-jobs 100000000", "the synthetic workload (--synth-jobs 100000000, --synth-nodes 24) needs about 9"},
        {"simulate --policy fifo --synth-nodes 1000000 --pool-nodes 1000000 --gpus-per-node 64 --mode pooled", "a cluster of 64000000 GPUs"},
        {"simulate --policy fifo --trace '%2$s' --vc-config '%1$s'", "a cluster of 1000000000 GPUs"},
        {"compare --policies fifo,sjf --jobs 2 --trace '%2$s' --vc-config '%1$s' --out '%3$s/c'", "runs side by side) needs about"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[2000], cmd[3000];
        snprintf(args, sizeof args, cases[i].args, tn, jb, dir);
        snprintf(cmd, sizeof cmd, "DS_MEM_LIMIT=2G timeout 60 '%s' %s >/dev/null 2>'%s'", bin, args, log);
        int rc = system(cmd);
        char *msg = tu_slurp(log, NULL);
        fprintf(stderr, "[%s] exit %d: %s", args, WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, msg ? msg : "");
        assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
        assert_non_null(strstr(msg, cases[i].needle));
        assert_non_null(strstr(msg, "GiB of memory, more than the 2.0 GiB available (DS_MEM_LIMIT=2G)"));
        free(msg);
    }
    /* what fits still runs */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "DS_MEM_LIMIT=2G '%s' simulate --policy fifo --synth-jobs 2000 --quiet >/dev/null 2>&1", bin);
    assert_int_equal(system(cmd), 0);
    tu_remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tenant_quota_only), cmocka_unit_test(test_quota_overflow),
        cmocka_unit_test(test_fractions_refused), cmocka_unit_test(test_narrowing_refused),
        cmocka_unit_test(test_time_bounds),       cmocka_unit_test(test_infeasible_job),
        cmocka_unit_test(test_many_tenants),      cmocka_unit_test(test_utf8_and_bom),
        cmocka_unit_test(test_csv_out_escapes),   cmocka_unit_test(test_long_config_line),
        cmocka_unit_test(test_readers_bounded_while_reading), cmocka_unit_test(test_sizes_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
