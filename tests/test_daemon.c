/* test_daemon.c: the parts of deepshared that need no Slurm: its config file (every error names file,
 * line and key), the runtime history and its journal, and the engine calls it relies on (adopt, move,
 * cancel_start, hold). */
#include <grp.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "daemon/dconfig.h"
#include "daemon/hist.h"
#include "deepshare/engine.h"
#include "deepshare/policy.h"
#include "deepshare/qad.h"

static void test_sample_config(void **state)
{
    (void)state;
    const char *src = getenv("DS_SRC");
    if (!src) skip();
    char path[512];
    snprintf(path, sizeof path, "%s/docs/deepshared.conf.sample", src);
    dconfig_t c;
    ds_error_t err;
    ds_error_clear(&err);
    dconfig_default(&c);
    assert_int_equal(dconfig_read(&c, path, &err), DS_OK);
    assert_int_equal(c.ntenants, 2);
    assert_string_equal(c.tenants[0].name, "vision");
    assert_int_equal(c.tenants[1].quota, 8);
    assert_string_equal(c.policy, "deepshare");
    assert_true(c.cycle == 60);
    assert_int_equal(c.listen_port, 9464);
    assert_string_equal(c.listen_addr, "127.0.0.1");
    assert_int_equal(c.gpu_sharing, 1);
    assert_int_equal(c.repin, 0); /* off unless asked (docs/deepshared.md, "Pinned for life, or anew") */
    assert_int_equal(c.batch_gap, 60);
}

static void expect_error(const char *text, long line, const char *field, const char *what)
{
    const char *p = tu_write_temp("d.conf", text);
    dconfig_t c;
    ds_error_t err;
    ds_error_clear(&err);
    dconfig_default(&c);
    assert_int_not_equal(dconfig_read(&c, p, &err), DS_OK);
    assert_string_equal(err.file, p);
    tu_expect_error(&err, p, line, field, what);
}

static void test_config_errors(void **state)
{
    (void)state;
    expect_error("tenant a 4\ncycel = 3\n", 2, "cycel", "unknown key");
    expect_error("tenant a 4\n\n# c\ncycle = fast\n", 4, "cycle", "expected a number");
    expect_error("tenant a 4\ncycle = 0\n", 2, "cycle", "expected a number");
    expect_error("tenant a 4\nrepin = 3\n", 2, "repin", "expected");
    expect_error("tenant a\n", 1, "tenant", "tenant ACCOUNT QUOTA_GPUS");
    expect_error("tenant a 4\ntenant A 2\n", 2, "tenant", "defined twice");
    expect_error("cycle = 5\n", 0, "tenant", "no tenants");
    expect_error("tenant a 4\nlisten = 9464\n", 2, "listen", "ADDRESS:PORT");
    expect_error("tenant a 4\njust words\n", 2, "", "key = value");
    /* accounts are lower-cased as Slurm stores them; policy parameters are kept for the policy */
    const char *p = tu_write_temp("d.conf", "tenant Vision 8\npolicy.rho-min = 0.8\nlisten = off\n");
    dconfig_t c;
    ds_error_t err;
    dconfig_default(&c);
    assert_int_equal(dconfig_read(&c, p, &err), DS_OK);
    assert_string_equal(c.tenants[0].name, "vision");
    assert_int_equal(c.nparams, 1);
    assert_string_equal(c.pkeys[0], "rho-min");
    assert_string_equal(c.pvals[0], "0.8");
    assert_int_equal(c.listen_port, 0);
}

static void test_history(void **state)
{
    (void)state;
    hist_t h;
    hist_init(&h, 2, 3600);
    assert_true(hist_predict(&h, "a", "u") == 3600);   /* nothing learned yet */
    hist_learn(&h, "a", "u", 100);
    /* one job: not enough for the user or the tenant, the cluster mean is used */
    assert_true(fabs(hist_predict(&h, "b", "x") - 100) < 1e-6);
    hist_learn(&h, "a", "u", 400);
    hist_learn(&h, "b", "v", 10);
    /* the user's geometric mean once it has min_history jobs */
    assert_true(fabs(hist_predict(&h, "a", "u") - 200) < 1e-6);
    /* a new user of tenant a gets the tenant's mean */
    assert_true(fabs(hist_predict(&h, "a", "new") - 200) < 1e-6);
    /* tenant b has one job: cluster mean of 100, 400, 10 */
    assert_true(fabs(hist_predict(&h, "b", "v") - exp((log(100) + log(400) + log(10)) / 3)) < 1e-6);
    /* its errors feed the overrun yield's test (docs/policy.md §2): none to go by yet, then, after a
     * user whose jobs all take 60 to 240 s, a job at 2x its prediction is nearly done */
    ds_runtime_predictor_t p;
    hist_predictor(&p, &h);
    assert_true(p.beyond(p.ctx, 120, 240) < 0);
    for (int i = 0; i < 200; i++) hist_learn(&h, "c", "w", i % 2 ? 60 : 240);
    double r = p.beyond(p.ctx, 120, 200);
    assert_true(r >= 1 && r < 200);
    hist_free(&h);
}

static int nwarn;
static void count_warn(const char *msg)
{
    (void)msg;
    nwarn++;
}


/* Time limits in the journal: a user whose runs are a steady share of their limits is predicted from the
 * limit, before and after the daemon restarts (the journal's ninth field); a job without a limit is not. */
static void test_journal_limits(void **state)
{
    (void)state;
    const char *p = tu_write_temp("journal_lim.csv", "");
    unlink(p);
    hist_t h;
    ds_error_t err;
    char e[200];
    hist_init(&h, 3, 3600);
    assert_int_equal(hist_open(&h, p, NULL, &err), 0);
    for (int i = 0; i < 3; i++) {
        int64_t lim = 600 << (2 * i); /* 600, 2400, 9600: runs of a third of each */
        assert_int_equal(hist_record(&h, (uint32_t)(30 + i), "a", "u", 1, (double)lim / 3, 5000 + i, 1000, 900, lim, e,
                                     sizeof e), 0);
    }
    double hp = hist_predict(&h, "a", "u");
    assert_true(fabs(hist_predict_limit(&h, "a", "u", 6000) - 2000) < 1e-6);
    assert_true(fabs(hist_predict_limit(&h, "a", "u", 0) - hp) < 1e-9);
    hist_free(&h);
    hist_init(&h, 3, 3600);
    assert_int_equal(hist_open(&h, p, NULL, &err), 0);
    assert_int_equal(h.records, 3);
    assert_true(fabs(hist_predict_limit(&h, "a", "u", 6000) - 2000) < 1e-6);
    assert_true(hist_predict_limit(&h, "a", "u", 100) <= 100); /* never past the limit */
    hist_free(&h);
}

static void test_journal(void **state)
{
    (void)state;
    const char *p = tu_write_temp("journal.csv", "slurm_job_id,tenant,user,gpus,seconds,end\n"
                                                 "11,a,u,1,100,1000\n"
                                                 "12,a,u,2,400,1100\n"
                                                 "12,a,u,2,400,1100\n" /* written twice: learned once */
                                                 "13,a,u,1,4");        /* torn by a crash */
    hist_t h;
    ds_error_t err;
    hist_init(&h, 1, 3600);
    nwarn = 0;
    assert_int_equal(hist_open(&h, p, count_warn, &err), 0);
    assert_int_equal(h.records, 2);
    assert_int_equal(nwarn, 1);
    assert_true(hist_seen(&h, 11, 1000) && hist_seen(&h, 12, 1100) && !hist_seen(&h, 13, 0));
    char e[200];
    assert_int_equal(hist_record(&h, 12, "a", "u", 2, 999, 1100, 700, 600, 0, e, sizeof e), 0); /* already there */
    assert_int_equal(h.records, 2);
    /* an upgraded daemon appends 9-field records (start, submit, limit) to its old 6-field journal */
    assert_int_equal(hist_record(&h, 14, "a", "u", 1, 50, 2100, 2050, 2000, 0, e, sizeof e), 0);
    assert_int_equal(hist_record(&h, 15, "a", "u", 1, 60, 2200, 2140, 0, 0, e, sizeof e), 0);    /* no submit */
    assert_int_equal(hist_record(&h, 16, "a", "u", 1, 60, 2300, 2240, 9999, 0, e, sizeof e), 0); /* after start */
    assert_int_equal(hist_record(&h, 17, "a", "u", 1, 60, 2400, 2500, 0, 0, e, sizeof e), -1);   /* start > end */
    assert_non_null(strstr(e, "out of range"));
    hist_free(&h);
    FILE *f = fopen(p, "r");
    char buf[4096];
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    /* the torn record got its newline, so the first new record stands on its own line */
    assert_non_null(strstr(buf, "13,a,u,1,4\n14,a,u,1,50,2100,2050,2000,0\n15,a,u,1,60,2200,2140,0,0\n"
                                "16,a,u,1,60,2300,2240,0,0\n"));
    hist_init(&h, 1, 3600);
    assert_int_equal(hist_open(&h, p, NULL, &err), 0);
    assert_int_equal(h.records, 5); /* the new records survived the reopen, beside the old ones */
    assert_true(hist_seen(&h, 14, 2100) && hist_seen(&h, 16, 2300) && !hist_seen(&h, 17, 2400));
    hist_free(&h);
}

/* Hardening (issue 13): NaN and fractions for integer keys are refused with file, line and key; listen is
 * checked as start checks it; non-loopback binds are flagged for a warning. */
static void test_config_hardening(void **state)
{
    (void)state;
    expect_error("tenant a 4\njob_capacity = nan\n", 2, "job_capacity", "expected an integer");
    expect_error("tenant a 4\ncycle = nan\n", 2, "cycle", "expected a number");
    expect_error("tenant a 4\nk = NaN\n", 2, "k", "expected an integer");
    expect_error("tenant a 4\npoll = -nan\n", 2, "poll", "expected a number");
    expect_error("tenant a 4\nk = 2.5\n", 2, "k", "expected an integer");
    expect_error("tenant a 4\njob_capacity = 100.5\n", 2, "job_capacity", "expected an integer");
    /* batch_gap: whole seconds in [0, 86400] (0: no batch evidence), as the simulator's --batch-gap */
    expect_error("tenant a 4\nbatch_gap = -1\n", 2, "batch_gap", "expected an integer in [0, 86400]");
    expect_error("tenant a 4\nbatch_gap = 1.5\n", 2, "batch_gap", "expected an integer");
    expect_error("tenant a 4\nbatch_gap = 90000\n", 2, "batch_gap", "expected an integer in [0, 86400]");
    expect_error("tenant a 4\nbatch_gap = soon\n", 2, "batch_gap", "expected an integer");
    expect_error("tenant a 4\ncycle = inf\n", 2, "cycle", "expected a number");
    expect_error("tenant a 4\nlisten = localhost:9464\n", 2, "listen", "not an IPv4 address");
    expect_error("tenant a 4\nlisten = 300.1.1.1:80\n", 2, "listen", "not an IPv4 address");
    expect_error("tenant a 4\nlisten = 127.0.0.1:\n", 2, "listen", "ADDRESS:PORT");
    expect_error("tenant a 4.5\n", 1, "tenant", "tenant ACCOUNT QUOTA_GPUS");
    expect_error("tenant a 99999999999999999999\n", 1, "tenant", "tenant ACCOUNT QUOTA_GPUS");
    const char *p = tu_write_temp("d.conf", "tenant a 1\nk = 3.0\nlisten = 0.0.0.0:9464\n");
    dconfig_t c;
    ds_error_t err;
    dconfig_default(&c);
    assert_int_equal(dconfig_read(&c, p, &err), DS_OK);
    assert_int_equal(c.k, 3);
    assert_true(dconfig_listen_public(&c));
    /* a non-loopback address without a read token: start and --check refuse it */
    assert_int_equal(dconfig_check(&c, &err), DS_EPARSE);
    assert_string_equal(err.field, "listen");
    assert_non_null(strstr(err.msg, "set read_token_file"));
    const char *tf = tu_write_temp("token", "s3cret-token-0123456789\n");
    chmod(tf, 0600);
    char text[600];
    snprintf(text, sizeof text, "tenant a 1\nlisten = 0.0.0.0:9464\nread_token_file = %s\n", tf);
    p = tu_write_temp("d.conf", text);
    dconfig_default(&c);
    assert_int_equal(dconfig_read(&c, p, &err), DS_OK);
    assert_string_equal(c.read_token, "s3cret-token-0123456789");
    assert_int_equal(dconfig_check(&c, &err), DS_OK);
    dconfig_default(&c);
    assert_false(dconfig_listen_public(&c)); /* 127.0.0.1 */
    /* --check binds once: an address of another machine passes the syntax but would fail at start */
    snprintf(c.listen_addr, sizeof c.listen_addr, "192.0.2.1"); /* TEST-NET-1, never local */
    ds_error_clear(&err);
    assert_int_equal(dconfig_check_bind(&c, &err), DS_EPARSE);
    assert_string_equal(err.field, "listen");
    assert_non_null(strstr(err.msg, "not an address of this machine"));
    snprintf(c.listen_addr, sizeof c.listen_addr, "127.0.0.1");
    c.listen_port = 0;
    assert_int_equal(dconfig_check_bind(&c, &err), DS_OK); /* off */
}

/* Who may change the file and who may charge a tenant (docs/deepshared.md, Access and threat model): a
 * file others may write, or owned by another user, is refused; members are parsed strictly; without
 * Slurm's account check or trust_accounts, a tenant without members stops the start. */
static void test_config_trust(void **state)
{
    (void)state;
    const char *p = tu_write_temp("t.conf", "tenant a 4 users=alice,@vision\ntenant b 2\ntrust_accounts = no\n");
    dconfig_t c;
    ds_error_t err;
    ds_error_clear(&err);
    chmod(p, 0644);
    dconfig_default(&c);
    assert_int_equal(dconfig_read(&c, p, &err), DS_OK);
    assert_string_equal(c.tenants[0].members, "alice,@vision");
    assert_int_equal(c.tenants[0].line, 1);
    assert_string_equal(c.tenants[1].members, "");
    assert_int_equal(c.trust_accounts, 0);
    /* b lists no members: refused unless Slurm enforces associations or the operator trusts accounts */
    assert_int_equal(dconfig_check_identity(&c, 0, &err), DS_EPARSE);
    tu_expect_error(&err, p, 2, "tenant", "tenant 'b' lists no members");
    assert_int_equal(dconfig_check_identity(&c, 1, &err), DS_OK);
    c.trust_accounts = 1;
    assert_int_equal(dconfig_check_identity(&c, 0, &err), DS_OK);
    assert_int_equal(dconfig_member(&c.tenants[0], "alice"), 1);
    assert_int_equal(dconfig_member(&c.tenants[0], "mallory"), 0);
    assert_int_equal(dconfig_member(&c.tenants[0], "alic"), 0);
    assert_int_equal(dconfig_member(&c.tenants[1], "anyone"), 1);
    /* a group: root is a member of the group of gid 0, whatever it is called */
    dc_tenant_t t;
    memset(&t, 0, sizeof t);
    struct group *g0 = getgrgid(0);
    if (g0) {
        snprintf(t.members, sizeof t.members, "nosuchuser,@%s", g0->gr_name);
        assert_int_equal(dconfig_member(&t, "root"), 1);
        assert_int_equal(dconfig_member(&t, "nosuchuser-either"), 0);
    }
    expect_error("tenant a 4 users=\n", 1, "users", "no empty names");
    expect_error("tenant a 4 users=al ice\n", 1, "tenant", "tenant ACCOUNT QUOTA_GPUS");
    expect_error("tenant a 4 users=alice,,bob\n", 1, "users", "no empty names");
    expect_error("tenant a 4 users=al$ice\n", 1, "users", "not a user name");
    expect_error("tenant a 4 members=alice\n", 1, "tenant", "users=NAME");
    expect_error("tenant a\033[2J 4\n", 1, "tenant", "may hold only letters");
    expect_error("tenant a 4\ntrust_accounts = maybe\n", 2, "trust_accounts", "yes or no");
    /* others may write it: refused, as at start and at every reload */
    p = tu_write_temp("t.conf", "tenant a 4\n");
    chmod(p, 0666);
    dconfig_default(&c);
    assert_int_not_equal(dconfig_read(&c, p, &err), DS_OK);
    tu_expect_error(&err, p, 0, "", "writable by every user (mode 666)");
    chmod(p, 0664);
    assert_int_not_equal(dconfig_read(&c, p, &err), DS_OK);
    tu_expect_error(&err, p, 0, "", "writable by its group");
    chmod(p, 0644);
    assert_int_equal(dconfig_read(&c, p, &err), DS_OK);
    if (geteuid() == 0) {
        /* owned by another user (nobody's uid): that user could rewrite it */
        assert_int_equal(chown(p, 65534, (gid_t)-1), 0);
        assert_int_not_equal(dconfig_read(&c, p, &err), DS_OK);
        tu_expect_error(&err, p, 0, "", "not by root or the daemon's user");
    }
}

/* The journal: a reused job id with another end time is a new job; non-finite or absurd run times and
 * malformed lines are skipped, each reported with file and line. */
static void test_journal_hardening(void **state)
{
    (void)state;
    const char *p = tu_write_temp("journal2.csv", "slurm_job_id,tenant,user,gpus,seconds,end\n"
                                                  "7,a,u,1,100,1000\n"
                                                  "7,a,u,1,300,5000\n"  /* id 7 reused later */
                                                  "8,a,u,1,inf,1200\n"
                                                  "9,a,u,1,1e308,1300\n"
                                                  "10,a,u,1,nan,1400\n"
                                                  "11,a,u,1,50,1500 junk\n"
                                                  "12,a,u,1,50\n"
                                                  "13,a,u,1,60,1600\n"
                                                  "14,a,u,1,60,1700,1640\n"          /* 7 fields */
                                                  "15,a,u,1,60,1800,1900,1000\n"     /* start after end */
                                                  "16,a,u,1,60,1900,1840,1850\n"     /* submit after start */
                                                  "17,a,u,1,60,2000,1940,1900,5,6\n" /* 10 fields */
                                                  "21,a,u,1,60,2000,1940,1900,-5\n"  /* negative limit */
                                                  "22,a,u,1,60,2000,1940,1900,1.5\n" /* fractional limit */
                                                  "23,a,u,1,60,2000,1940,1900,99999999999\n" /* over a year */
                                                  "18,a,u,1,60,2100,1,-1\n"          /* negative submit */
                                                  "19,a,u,1,60,2200,2140,2100\n");
    hist_t h;
    ds_error_t err;
    hist_init(&h, 1, 3600);
    nwarn = 0;
    assert_int_equal(hist_open(&h, p, count_warn, &err), 0);
    assert_int_equal(h.records, 4);
    assert_int_equal(nwarn, 13);
    assert_int_equal(h.skipped, 13);
    assert_true(hist_seen(&h, 7, 1000) && hist_seen(&h, 7, 5000) && !hist_seen(&h, 7, 6000));
    assert_true(hist_seen(&h, 19, 2200) && !hist_seen(&h, 15, 1800) && !hist_seen(&h, 16, 1900));
    double pr = hist_predict(&h, "a", "u");
    assert_true(isfinite(pr) && fabs(pr - exp((log(100) + log(300) + log(60) + log(60)) / 4)) < 1e-6);
    char e[200];
    assert_int_equal(hist_record(&h, 7, "a", "u", 1, 400, 9000, 8600, 8000, 0, e, sizeof e), 0); /* third use of 7 */
    assert_int_equal(h.records, 5);
    assert_int_equal(hist_record(&h, 20, "a", "u", 1, INFINITY, 9100, -1, 0, 0, e, sizeof e), -1);
    assert_non_null(strstr(e, "out of range"));
    assert_int_equal(h.records, 5);
    hist_free(&h);
}

/* The read token: its file must be private, the token long enough and URL-safe, and set once. */
static void test_read_token(void **state)
{
    (void)state;
    const char *tf = tu_write_temp("token", "0123456789abcdef\n");
    char text[600];
    snprintf(text, sizeof text, "tenant a 1\nread_token_file = %s\n", tf);
    chmod(tf, 0644);
    const char *p = tu_write_temp("d.conf", text);
    expect_error(text, 2, "read_token_file", "readable by every user");
    chmod(tf, 0640);
    dconfig_t c;
    ds_error_t err;
    dconfig_default(&c);
    assert_int_equal(dconfig_read(&c, p, &err), DS_OK);
    assert_string_equal(c.read_token, "0123456789abcdef");
    assert_int_equal(c.token_line, 2);
    /* both ways at once: refused on the second line, naming the first */
    snprintf(text, sizeof text, "tenant a 1\nread_token_file = %s\nread_token = 0123456789abcdefXYZ\n", tf);
    p = tu_write_temp("d2.conf", text);
    chmod(p, 0600);
    dconfig_default(&c);
    assert_int_not_equal(dconfig_read(&c, p, &err), DS_OK);
    tu_expect_error(&err, p, 3, "read_token", "already set on line 2");
    /* inline: only in a private config file, 16 printable characters at least */
    p = tu_write_temp("d3.conf", "tenant a 1\nread_token = 0123456789abcdefXYZ\n");
    chmod(p, 0644);
    dconfig_default(&c);
    assert_int_not_equal(dconfig_read(&c, p, &err), DS_OK);
    tu_expect_error(&err, p, 2, "read_token", "readable by every user");
    chmod(p, 0600);
    dconfig_default(&c);
    assert_int_equal(dconfig_read(&c, p, &err), DS_OK);
    assert_string_equal(c.read_token, "0123456789abcdefXYZ");
    static const char *const bad[][2] = {{"short", "16 to 127 characters"}, {"0123456789abcdef&x=1", "printable"},
                                         {"0123456789abcdef x", "printable"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "tenant a 1\n\nread_token = %s\n", bad[i][0]);
        p = tu_write_temp("d4.conf", text);
        chmod(p, 0600);
        dconfig_default(&c);
        assert_int_not_equal(dconfig_read(&c, p, &err), DS_OK);
        tu_expect_error(&err, p, 3, "read_token", bad[i][1]);
    }
    snprintf(text, sizeof text, "tenant a 1\nread_token_file = /nonexistent/token\n");
    expect_error(text, 2, "read_token_file", "cannot stat");
}

/* --check-config prints every key with its value (defaults included) but never the token; a reload keeps
 * the running value of every key that needs a restart and names them. */
static void test_print_and_reload_merge(void **state)
{
    (void)state;
    const char *p = tu_write_temp("d5.conf", "tenant a 4\ntenant b 2\ncycle = 5\nread_token = 0123456789abcdefXYZ\n"
                                             "policy.m = 2\n");
    chmod(p, 0600);
    dconfig_t c;
    ds_error_t err;
    dconfig_default(&c);
    assert_int_equal(dconfig_read(&c, p, &err), DS_OK);
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    dconfig_print(f, &c);
    fclose(f);
    static const char *const keys[] = {"policy = deepshare", "cycle = 5", "poll = 0.5", "dispatch_timeout = 30",
        "slurm_conf = ", "staging_partition = staging", "g_partition = prod", "be_partition = batch", "k = 2",
        "gpu_sharing = 1", "repin = 0", "gpu_mem_mib = 24576", "default_job_gpu_mem_mib = 8192", "job_capacity = 4096",
        "qad_lambda = 0.3", "qad_theta = 0.95", "journal = /var/lib/deepshared/journal.csv", "default_runtime = 3600",
        "min_history = 3", "batch_gap = 60", "interference_profile = ", "missing_rho = 1", "listen = 127.0.0.1:9464",
        "status_window = 21600", "verbose = 0", "tenant a 4", "tenant b 2", "policy.m = 2", "read_token = (set"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strstr(out, keys[i])) fail_msg("'%s' missing from:\n%s", keys[i], out);
    assert_null(strstr(out, "0123456789abcdef"));
    free(out);
    /* the printed configuration reads back to the same (the token line aside, a comment) */
    dconfig_t next = c;
    next.cycle = 7;
    next.k = 3;
    next.tenants[0].quota = 8;
    snprintf(next.journal, sizeof next.journal, "/tmp/other.csv");
    snprintf(next.pvals[0], sizeof next.pvals[0], "3");
    next.listen_port = 9999;
    char restart[256];
    dconfig_reload_merge(&c, &next, restart, sizeof restart);
    assert_string_equal(restart, "journal, k, listen, policy.*");
    assert_true(next.cycle == 7);           /* applies at once */
    assert_int_equal(next.tenants[0].quota, 8);
    assert_int_equal(next.k, 2);            /* the running values stay */
    assert_string_equal(next.journal, "/var/lib/deepshared/journal.csv");
    assert_string_equal(next.pvals[0], "2");
    assert_int_equal(next.listen_port, 9464);
    next = c;
    dconfig_reload_merge(&c, &next, restart, sizeof restart);
    assert_string_equal(restart, "");
}

/* ds_engine_set_quota: a raised quota promotes BE work to G at the next cycle, a lowered one demotes the
 * newest G jobs to BE (never preempting G work); refused where partitions were sized by quotas. */
static void test_engine_set_quota(void **state)
{
    (void)state;
    ds_trace_t t;
    tu_trace(&t, "a:2 b:2", "1 a 1 0 1000; 2 a 1 1 1000; 3 a 1 2 1000; 4 a 1 3 1000");
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.mode = DS_MODE_POOLED;
    c.gpus_per_node = 4;
    c.pool_nodes = 1;
    c.k = 1; /* whole GPUs: a shared job stays BE, which is not what this test is about */
    ds_engine_t *e;
    ds_error_t err;
    const ds_policy_ops_t *ops = ds_policy_find("deepshare");
    void *pc = ops->config_new();
    assert_int_equal(ops->config_set(pc, "cycle", "1", &err), DS_OK);
    assert_int_equal(ds_engine_create(&e, &t, &c, ops, pc, &err), DS_OK);
    for (int j = 0; j < 4; j++) ds_engine_arrive(e, j, j);
    ds_engine_schedule(e, 4, 1);
    assert_int_equal(e->tenant_g_gpus[0], 2);
    assert_int_equal(e->tenant_be_gpus[0], 2);
    assert_int_equal(ds_engine_quota(e, 0), 2);
    double q0 = ds_engine_qad(e, 1, DS_QAD_ALL);
    assert_int_equal(ds_engine_set_quota(e, 0, 4), DS_OK);
    assert_int_equal(ds_engine_quota(e, 0), 4);
    assert_int_equal(t.tenants[0].quota_gpus, 2); /* the trace is the driver's */
    assert_true(e->parts[0].dirty);
    ds_engine_schedule(e, 5, 1);
    assert_int_equal(e->tenant_g_gpus[0], 4); /* promoted */
    assert_int_equal(e->tenant_be_gpus[0], 0);
    char msg[200] = "";
    if (ds_engine_check(e, msg, sizeof msg) || ops->check(e, e->pstate, msg, sizeof msg)) fail_msg("%s", msg);
    assert_int_equal(ds_engine_set_quota(e, 0, 1), DS_OK);
    ds_engine_schedule(e, 6, 1);
    assert_int_equal(e->tenant_g_gpus[0], 1); /* the three newest demoted, none stopped */
    assert_int_equal(e->tenant_be_gpus[0], 3);
    assert_int_equal(e->tenant_running[0], 4);
    assert_int_equal(e->js[0].klass, DS_CLASS_G);
    if (ds_engine_check(e, msg, sizeof msg) || ops->check(e, e->pstate, msg, sizeof msg)) fail_msg("%s", msg);
    assert_true(ds_engine_qad(e, 1, DS_QAD_ALL) == q0);
    assert_int_equal(ds_engine_set_quota(e, 2, 1), DS_EINVAL);
    assert_int_equal(ds_engine_set_quota(e, 0, -1), DS_EINVAL);
    ds_engine_destroy(e);
    /* partitioned: each tenant's nodes were sized from its quota */
    c.mode = DS_MODE_PARTITIONED;
    c.pool_nodes = 0;
    assert_int_equal(ds_engine_create(&e, &t, &c, ops, pc, &err), DS_OK);
    assert_int_equal(ds_engine_set_quota(e, 0, 8), DS_EINVAL);
    assert_int_equal(ds_engine_quota(e, 0), 2);
    assert_int_equal(ds_engine_set_quota(e, 0, 2), DS_OK); /* unchanged is fine */
    ds_engine_destroy(e);
    ops->config_free(pc);
    ds_trace_free(&t);
}

/* The daemon adopts running jobs after a restart and moves requeued jobs to their pinned GPUs. */
static void test_engine_adopt_move(void **state)
{
    (void)state;
    ds_trace_t t;
    tu_trace(&t, "a:8 b:8", "1 a 1 0 100; 2 b 2 0 100; 3 a 1 5 100");
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.mode = DS_MODE_POOLED;
    c.gpus_per_node = 4;
    c.cpus_per_node = 8;
    c.pool_nodes = 3; /* the cluster's size, not the quotas' (which would give 4 nodes) */
    ds_engine_t *e;
    ds_error_t err;
    assert_int_equal(ds_engine_create(&e, &t, &c, ds_policy_find("fifo"), NULL, &err), DS_OK);
    assert_int_equal(e->nnodes, 3);
    int32_t g0[] = {1}, g1[] = {4, 5};
    ds_engine_adopt(e, 0, g0, DS_CLASS_G, 10);
    ds_engine_adopt(e, 1, g1, DS_CLASS_BE, 10);
    assert_int_equal(e->js[0].status, DS_JS_RUNNING);
    assert_int_equal(e->tenant_g_gpus[0], 1);
    assert_int_equal(e->tenant_be_gpus[1], 2);
    assert_int_equal(e->tenant_pending_gpus[0], 0);
    assert_int_equal(e->nodes[0].nfree, 3);
    assert_int_equal(e->nodes[1].nfree, 2);
    char msg[200];
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    /* move job 1 (GPU 1 of node 0) to GPU 3 of node 2; a busy target is refused */
    int32_t busy[] = {4}, to[] = {11};
    assert_int_equal(ds_engine_move(e, 0, busy), DS_EINVAL);
    assert_int_equal(ds_engine_move(e, 0, to), DS_OK);
    assert_int_equal(e->jgpus[e->jgpu_off[0]], 11);
    assert_int_equal(e->nodes[0].nfree, 4);
    assert_int_equal(e->nodes[2].nfree, 3);
    assert_int_equal(e->gpus[1].nres, 0);
    assert_int_equal(e->gpus[11].nres, 1);
    assert_int_equal(e->nodes[0].cpus_used, 0);
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    /* several jobs at once: job 0 onto GPU 4 of job 1, which moves on to 5 and 6, cannot go alone; a GPU named
     * twice, or a job of the set not running, refuses the whole set and moves nothing */
    int32_t pair[] = {0, 1}, shift[] = {4, 5, 6}, twice[] = {4, 4, 5}, back[] = {11, 4, 5}, onto4[] = {4};
    assert_int_equal(ds_engine_move(e, 0, onto4), DS_EINVAL);
    assert_int_equal(ds_engine_move_many(e, 2, pair, twice), DS_EINVAL);
    assert_int_equal(ds_engine_move_many(e, 2, (int32_t[]){1, 2}, shift), DS_EINVAL);
    assert_int_equal(e->jgpus[e->jgpu_off[0]], 11);
    assert_int_equal(e->jgpus[e->jgpu_off[1]], 4);
    assert_int_equal(ds_engine_move_many(e, 2, pair, shift), DS_OK);
    assert_int_equal(e->jgpus[e->jgpu_off[0]], 4);
    assert_int_equal(e->jgpus[e->jgpu_off[1]], 5);
    assert_int_equal(e->jgpus[e->jgpu_off[1] + 1], 6);
    assert_int_equal(e->nodes[1].nfree, 1);
    assert_int_equal(e->nodes[2].nfree, 4);
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    assert_int_equal(ds_engine_move_many(e, 2, pair, back), DS_OK);
    assert_int_equal(e->nodes[1].nfree, 2);
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    /* the policy places new work around adopted jobs */
    ds_engine_arrive(e, 2, 20);
    ds_engine_schedule(e, 20, 0);
    assert_int_equal(e->js[2].status, DS_JS_RUNNING);
    int32_t g = e->jgpus[e->jgpu_off[2]];
    assert_true(g != 11 && g != 4 && g != 5);
    ds_engine_finish(e, 0, 30);
    ds_engine_finish(e, 1, 30);
    assert_int_equal(e->tenant_g_gpus[0], 1);
    assert_int_equal(e->tenant_be_gpus[1], 0);
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

/* An engine with the default configuration for a registered policy (its ops in *ops). */
static ds_engine_t *default_engine(const ds_trace_t *t, const char *policy, const ds_policy_ops_t **ops)
{
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    ds_engine_t *e = NULL;
    ds_error_t err;
    *ops = ds_policy_find(policy);
    if (!*ops) fail_msg("no policy %s", policy);
    if (ds_engine_create(&e, t, &c, *ops, NULL, &err) != DS_OK) fail_msg("%s: %s", policy, err.msg);
    return e;
}

/* A start the driver takes back leaves the job pending as if it had not started: its pending spell,
 * queue order and counters go on, no preemption is counted, and the policy places it again. DeepShare
 * hears cancel_start (its check would fail on a preempted G job); FIFO, without that hook, enqueue. */
static void test_engine_cancel_start(void **state)
{
    (void)state;
    static const char *const policies[] = {"deepshare", "fifo"};
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
        ds_trace_t t;
        tu_trace(&t, "a:8", "1 a 2 0 100; 2 a 1 0 100");
        const ds_policy_ops_t *ops;
        ds_engine_t *e = default_engine(&t, policies[p], &ops);
        ds_engine_arrive(e, 0, 0);
        ds_engine_arrive(e, 1, 0);
        int64_t seq = e->js[0].arrival_seq;
        ds_engine_schedule(e, 5, 1);
        assert_int_equal(e->js[0].status, DS_JS_RUNNING);
        assert_int_equal(e->js[0].first_start, 5);
        ds_engine_clear_decisions(e);
        ds_engine_cancel_start(e, 0, 5);
        const ds_jstate_t *js = ds_engine_job(e, 0);
        assert_int_equal(js->status, DS_JS_PENDING);
        assert_int_equal(js->first_start, -1);
        assert_int_equal(js->queued, 0);
        assert_int_equal(js->pend_since, 0);
        assert_int_equal(js->arrival_seq, seq);
        assert_int_equal(js->preemptions, 0);
        assert_true(js->overhead == 0);
        assert_int_equal(js->run_time, 0);
        assert_int_equal(e->n_preemptions, 0);
        assert_int_equal(e->parts[js->part].npending, 1);
        assert_int_equal(e->tenant_pending_gpus[0], 2);
        assert_int_equal(e->tenant_g_gpus[0] + e->tenant_be_gpus[0], 1);
        int32_t nd;
        ds_engine_decisions(e, &nd);
        assert_int_equal(nd, 0); /* the driver did it: nothing to apply */
        char msg[200] = "";
        if (ds_engine_check(e, msg, sizeof msg) || (ops->check && ops->check(e, e->pstate, msg, sizeof msg)))
            fail_msg("%s: %s", ops->name, msg);
        /* placed again later; its wait runs from its arrival */
        ds_engine_schedule(e, 9, 1);
        assert_int_equal(e->js[0].status, DS_JS_RUNNING);
        assert_int_equal(e->js[0].queued, 9);
        if (ds_engine_check(e, msg, sizeof msg) || (ops->check && ops->check(e, e->pstate, msg, sizeof msg)))
            fail_msg("%s: %s", ops->name, msg);
        ds_engine_destroy(e);
        ds_trace_free(&t);
    }
}

/* A job the driver holds (ds_engine_hold: deepshared cannot start it yet) is passed over: the GPUs it
 * would have had go to the next jobs in the same pass, nothing is reserved or preempted for it, and a
 * release puts it back in the next pass. Policies that block at the head of their queue (FIFO, SJF)
 * treat a held head as one that does not fit: it blocks. (Lucid, which needs a profiler node lent by a
 * second tenant, passes over held jobs the same way; not set up here.) */
static void test_engine_hold(void **state)
{
    (void)state;
    /* Tiresias decides only on its 60 s ticks (timer passes); the others on any pass */
    static const struct { const char *name; int passes_over, ticks; } policies[] = {
        {"deepshare", 1, 0}, {"tiresias", 1, 1}, {"fifo", 0, 0}, {"sjf", 0, 0}};
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
        ds_trace_t t;
        /* job 0 is first in every order (earliest, shortest); 1 and 2 fill the cluster without it */
        tu_trace(&t, "a:8", "1 a 8 0 50; 2 a 4 1 100; 3 a 4 1 100");
        const ds_policy_ops_t *ops;
        ds_engine_t *e = default_engine(&t, policies[p].name, &ops);
        char msg[200] = "";
        ds_engine_arrive(e, 0, 0);
        ds_engine_hold(e, 0, 1);
        assert_false(ds_engine_startable(e, 0));
        assert_int_equal(ds_engine_place(e, 0, 0), 0);
        ds_engine_arrive(e, 1, 1);
        ds_engine_arrive(e, 2, 1);
        ds_engine_schedule(e, 60, 1);
        assert_int_equal(e->js[0].status, DS_JS_PENDING);
        int want = policies[p].passes_over ? DS_JS_RUNNING : DS_JS_PENDING;
        if (e->js[1].status != want || e->js[2].status != want)
            fail_msg("%s: jobs behind a held one are %d/%d, want %d", ops->name, e->js[1].status, e->js[2].status, want);
        if (ds_engine_check(e, msg, sizeof msg) || (ops->check && ops->check(e, e->pstate, msg, sizeof msg)))
            fail_msg("%s: %s", ops->name, msg);
        /* held across passes until released; the release alone (no timer) brings it back */
        ds_engine_schedule(e, 120, 1);
        assert_int_equal(e->js[0].status, DS_JS_PENDING);
        if (policies[p].passes_over) {
            ds_engine_finish(e, 1, 160);
            ds_engine_finish(e, 2, 160);
        }
        ds_engine_clear_decisions(e);
        ds_engine_hold(e, 0, 0);
        assert_true(ds_engine_startable(e, 0));
        ds_engine_schedule(e, 180, policies[p].ticks);
        if (e->js[0].status != DS_JS_RUNNING) fail_msg("%s: a released job did not start", ops->name);
        assert_int_equal(e->js[0].queued, 180); /* held time is queueing time */
        assert_int_equal(e->n_preemptions, 0);
        if (ds_engine_check(e, msg, sizeof msg) || (ops->check && ops->check(e, e->pstate, msg, sizeof msg)))
            fail_msg("%s: %s", ops->name, msg);
        ds_engine_destroy(e);
        ds_trace_free(&t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_config),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_history),
        cmocka_unit_test(test_journal),
        cmocka_unit_test(test_journal_limits),
        cmocka_unit_test(test_config_hardening),
        cmocka_unit_test(test_config_trust),
        cmocka_unit_test(test_journal_hardening),
        cmocka_unit_test(test_read_token),
        cmocka_unit_test(test_print_and_reload_merge),
        cmocka_unit_test(test_engine_set_quota),
        cmocka_unit_test(test_engine_adopt_move),
        cmocka_unit_test(test_engine_cancel_start),
        cmocka_unit_test(test_engine_hold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
