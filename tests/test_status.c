/* test_status.c: deepshared's status page and /api/status rendered from a daemon driving the in-memory
 * Slurm of fake_slurm.c: the tenants with their QAD history, the queue in the policy's order with each
 * job's reason (explain's text), the nodes x GPUs map, names from users escaped in HTML and JSON, and the
 * page served over HTTP with its static files and a content security policy. */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "testutil.h"
#include "fake_slurm.h"
#include "daemon/daemon.h"

static daemon_t D;
/* A tenant and a user whose names try to break out of HTML and JSON (Slurm takes such account strings). */
#define EVIL_TENANT "x<img src=y onerror=alert(1)>\"'&"
#define EVIL_USER "<script>alert(\"u\")</script>"

static void boot(void)
{
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    snprintf(D.cfg.path, sizeof D.cfg.path, "test.conf");
    D.cfg.journal[0] = 0;
    D.cfg.listen_port = 0;
    D.cfg.k = 1; /* whole GPUs: the scene below has one outcome */
    D.cfg.gpu_sharing = 0;
    D.cfg.status_window = 3600;
    snprintf(D.cfg.tenants[0].name, sizeof D.cfg.tenants[0].name, "a");
    D.cfg.tenants[0].quota = 2;
    snprintf(D.cfg.tenants[1].name, sizeof D.cfg.tenants[1].name, "%s", EVIL_TENANT);
    D.cfg.tenants[1].quota = 4;
    D.cfg.ntenants = 2;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(daemon_setup(&D, &err), DS_OK);
}

static void cycle(void)
{
    char err[300];
    assert_true(daemon_sync(&D, 0, err, sizeof err) >= 0);
    D.now += 10;
    daemon_pass(&D, 1);
    daemon_cycle_figures(&D);
    status_sample(&D);
}

/* Tenant a fills the node's four GPUs (two of them borrowed as BE). The other tenant's two-GPU job takes
 * the borrowed GPUs back; its next two jobs wait, and so do a's two requeued jobs and a later one. */
static void scene(void)
{
    fs_reset();
    fs_add_node("n0", 32, 4);
    for (uint32_t id = 1; id <= 4; id++) fs_add_job(id, "a", "staging", "gpus=1");
    boot();
    D.slurm_up = 1;
    cycle();
    fs_run_dispatched("staging");
    cycle();
    fs_add_job(10, "a", "staging", "gpus=1");
    sl_job_t *j = fs_add_job(11, EVIL_TENANT, "staging", "gpus=1 class=BE");
    snprintf(j->user, sizeof j->user, "%s", EVIL_USER);
    fs_add_job(12, EVIL_TENANT, "staging", "gpus=2");
    j = fs_add_job(13, EVIL_TENANT, "staging", "gpus=1");
    snprintf(j->user, sizeof j->user, "bad\xff\xfe-utf8");
    for (int i = 0; i < 6; i++) {
        cycle();
        fs_run_dispatched("staging");
    }
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++) n++;
    return n;
}

static void test_page_content_and_escaping(void **st)
{
    (void)st;
    scene();
    char *html, *json;
    status_render(&D, &html, &json);
    /* tenants, with a chart of their history */
    assert_non_null(strstr(html, "<section id=\"tenants\">"));
    assert_non_null(strstr(html, "<tr id=\"tenant-0\""));
    assert_non_null(strstr(html, "<polyline class=\"qr t0\""));
    /* user-supplied names are escaped, never raw */
    assert_non_null(strstr(html, "x&lt;img src=y onerror=alert(1)&gt;&quot;&#39;&amp;"));
    assert_null(strstr(html, "<img"));
    assert_null(strstr(html, "<script"));
    assert_non_null(strstr(html, "&lt;script&gt;alert(&quot;u&quot;)&lt;/script&gt;"));
    /* the queue: five pending jobs (a's two requeued BE jobs among them), each with explain's reason */
    assert_non_null(strstr(html, "5 pending, in scheduling order"));
    static const int order[] = {11, 13, 3, 4, 10};
    const char *at = html;
    for (int i = 0; i < 5; i++) {
        char row[40];
        snprintf(row, sizeof row, "<tr id=\"job-%d\"><td>%d</td>", order[i], i + 1);
        const char *p = strstr(html, row);
        if (!p || p < at) fail_msg("queue row %d is not job %d in order", i + 1, order[i]);
        at = p;
    }
    assert_non_null(strstr(html, "submitted as best effort: runs only on idle or shared GPUs"));
    assert_non_null(strstr(html, "within quota: eligible as guaranteed (G)"));
    assert_non_null(strstr(html, "no fit: no node has 1 free GPU"));
    /* the GPU map: a's two guaranteed jobs, and the two GPUs the other tenant's job took back */
    assert_non_null(strstr(html, "<table class=\"map\">"));
    assert_int_equal(count(html, "<span class=\"job t0 G\""), 2);
    assert_int_equal(count(html, "<span class=\"job t1 G\" title=\"job 12,"), 2);
    assert_int_equal(count(html, "<td class=\"busy\">"), 4);
    assert_int_equal(count(html, "<td class=\"idle\">"), 0);

    /* the JSON is valid (the invalid UTF-8 of a user name included) and says the same */
    assert_null(strstr(json, "<"));
    json_error_t je;
    json_t *root = json_loads(json, 0, &je);
    if (!root) fail_msg("JSON does not parse: %s at %d: %.200s", je.text, je.position, json);
    json_t *ten = json_object_get(root, "tenants");
    assert_int_equal(json_array_size(ten), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ten, 1), "name")), EVIL_TENANT);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ten, 0), "quota_gpus")), 2);
    assert_true(json_array_size(json_object_get(json_array_get(ten, 0), "history")) >= 5);
    json_t *q = json_object_get(root, "queue");
    assert_int_equal(json_integer_value(json_object_get(q, "pending")), 5);
    json_t *jobs = json_object_get(q, "jobs");
    assert_int_equal(json_array_size(jobs), 5);
    int seen11 = 0;
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(json_integer_value(json_object_get(json_array_get(jobs, i), "id")), order[i]);
        json_t *x = json_array_get(jobs, i);
        assert_int_equal(json_integer_value(json_object_get(x, "position")), (json_int_t)i + 1);
        const char *ex = json_string_value(json_object_get(x, "explain"));
        char want[32];
        snprintf(want, sizeof want, "job %lld:", (long long)json_integer_value(json_object_get(x, "id")));
        assert_true(ex && !strncmp(ex, want, strlen(want))); /* explain's own text */
        assert_true(json_array_size(json_object_get(x, "reason")) >= 1);
        if (json_integer_value(json_object_get(x, "id")) == 11) {
            seen11 = 1;
            assert_string_equal(json_string_value(json_object_get(x, "user")), EVIL_USER);
        }
        if (json_integer_value(json_object_get(x, "id")) == 13)
            assert_non_null(strstr(json_string_value(json_object_get(x, "user")), "\xef\xbf\xbd")); /* U+FFFD */
    }
    assert_true(seen11);
    /* the policy's order: the under-served tenant first (band), a's requeued jobs (less remaining) before 10 */
    assert_true(json_is_true(json_object_get(json_array_get(ten, 1), "under_served")));
    assert_true(json_is_false(json_object_get(json_array_get(ten, 0), "under_served")));
    json_t *nodes = json_object_get(root, "nodes");
    assert_int_equal(json_array_size(nodes), 1);
    json_t *gpus = json_object_get(json_array_get(nodes, 0), "gpus");
    assert_int_equal(json_array_size(gpus), 4);
    for (size_t g = 0; g < 4; g++) {
        json_t *res = json_array_get(gpus, g);
        assert_int_equal(json_array_size(res), 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(res, 0), "tenant")), g < 2 ? "a" : EVIL_TENANT);
    }
    json_decref(root);
    /* the whole page around it */
    char *page = status_page(html, "?token=abc\"<");
    assert_non_null(strstr(page, "<!DOCTYPE html>"));
    assert_non_null(strstr(page, "/api/status?token=abc&quot;&lt;\""));
    assert_null(strstr(page, "http://"));
    assert_null(strstr(page, "https://"));
    free(page);
    free(html);
    free(json);
    status_free(&D);
    daemon_teardown(&D);
}

/* The history is bounded: a day of cycles keeps at most the window's samples; a reload that renames the
 * tenants keeps each remaining tenant's history. */
static void test_history_bounded(void **st)
{
    (void)st;
    fs_reset();
    fs_add_node("n0", 32, 4);
    fs_add_job(1, "a", "staging", "gpus=1");
    boot();
    for (int i = 0; i < 8640; i++) cycle(); /* 10 s apart: a day */
    char *html, *json;
    status_render(&D, &html, &json);
    json_t *root = json_loads(json, 0, NULL);
    assert_non_null(root);
    size_t n = json_array_size(json_object_get(json_array_get(json_object_get(root, "tenants"), 0), "history"));
    assert_true(n >= 300 && n <= 361); /* a window of 3600 s at one sample per 10 s */
    json_decref(root);
    free(html);
    free(json);
    char old[2][64] = {"a", EVIL_TENANT};
    /* a reload reorders the tenants: a moves to index 1 with its history, the other is replaced by "b" */
    snprintf(D.cfg.tenants[0].name, sizeof D.cfg.tenants[0].name, "b");
    snprintf(D.cfg.tenants[1].name, sizeof D.cfg.tenants[1].name, "a");
    status_tenants_changed(&D, old, 2);
    dtenant_t t0 = D.ten[0];
    D.ten[0] = D.ten[1], D.ten[1] = t0;
    status_render(&D, &html, &json);
    root = json_loads(json, 0, NULL);
    assert_non_null(root);
    json_t *a = json_array_get(json_object_get(root, "tenants"), 1), *b = json_array_get(json_object_get(root, "tenants"), 0);
    assert_string_equal(json_string_value(json_object_get(a, "name")), "a");
    assert_int_equal(json_integer_value(json_object_get(a, "cycles_with_demand")), 8640);
    assert_int_equal(json_array_size(json_object_get(a, "history")), n);
    assert_int_equal(json_integer_value(json_object_get(b, "cycles_with_demand")), 0);
    json_decref(root);
    free(html);
    free(json);
    status_free(&D);
    daemon_teardown(&D);
}

/* ---- over HTTP */
static int port;

static int get(const char *path, const char *extra, char *buf, size_t n)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct timeval tv = {10, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(s, (struct sockaddr *)&a, sizeof a)) { close(s); return 0; }
    char req[512];
    int len = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: x\r\n%s\r\n", path, extra ? extra : "");
    if (write(s, req, (size_t)len) != len) { close(s); return 0; }
    size_t got = 0;
    ssize_t r;
    while (got + 1 < n && (r = read(s, buf + got, n - 1 - got)) > 0) got += (size_t)r;
    close(s);
    buf[got] = 0;
    int code = 0;
    sscanf(buf, "HTTP/1.%*d %d", &code);
    return code;
}

static void test_served(void **st)
{
    (void)st;
    scene();
    ds_error_t err;
    int started = 0;
    for (int tries = 0; tries < 20 && !started; tries++) {
        port = 20000 + (int)((getpid() * 11 + tries * 197) % 30000);
        D.cfg.listen_port = port;
        started = http_start(&D, &err) == DS_OK;
    }
    assert_true(started);
    http_set_token("");
    static char buf[1 << 20];
    /* before any publish the page is rendered on request, under the state lock */
    assert_int_equal(get("/", NULL, buf, sizeof buf), 200);
    assert_non_null(strstr(buf, "Content-Type: text/html; charset=utf-8"));
    assert_non_null(strstr(buf, "Content-Security-Policy: default-src 'none'; script-src 'self'"));
    assert_non_null(strstr(buf, "<tr id=\"job-11\">"));
    assert_non_null(strstr(buf, "<script src=\"/static/status.js\" defer></script>"));
    assert_null(strstr(buf, "<script>"));
    assert_null(strstr(buf, "<tr id=\"job-14\">"));
    /* a job arrives within the second after that render: the publish that follows the change may not render
     * (at most once a second), but a request must not be served the page from before the change */
    fs_add_job(14, "a", "staging", "gpus=1");
    cycle();
    pthread_mutex_lock(&D.lock);
    http_publish(&D, 1);
    pthread_mutex_unlock(&D.lock);
    assert_int_equal(get("/", NULL, buf, sizeof buf), 200);
    assert_non_null(strstr(buf, "<tr id=\"job-14\">"));
    assert_int_equal(get("/api/status", NULL, buf, sizeof buf), 200);
    assert_non_null(strstr(buf, "Content-Type: application/json"));
    assert_non_null(strstr(buf, "\"pending\":6"));
    /* a publish with nothing changed keeps the snapshot: served as it was, not rendered again */
    pthread_mutex_lock(&D.lock);
    http_publish(&D, 0);
    pthread_mutex_unlock(&D.lock);
    assert_int_equal(get("/api/status", NULL, buf, sizeof buf), 200);
    assert_non_null(strstr(buf, "\"pending\":6"));
    assert_int_equal(get("/static/status.js", NULL, buf, sizeof buf), 200);
    assert_non_null(strstr(buf, "DOMParser"));
    assert_int_equal(get("/static/status.css", NULL, buf, sizeof buf), 200);
    assert_non_null(strstr(buf, "text/css"));
    assert_int_equal(get("/static/../main.c", NULL, buf, sizeof buf), 404);
    /* DS_STATUS_HOLD=SECONDS keeps the page up for a look in a browser (port on stderr) */
    if (getenv("DS_STATUS_HOLD")) {
        fprintf(stderr, "status page on http://127.0.0.1:%d/ for %s s\n", port, getenv("DS_STATUS_HOLD"));
        sleep((unsigned)atoi(getenv("DS_STATUS_HOLD")));
    }
    http_stop();
    status_free(&D);
    daemon_teardown(&D);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_content_and_escaping),
        cmocka_unit_test(test_history_bounded),
        cmocka_unit_test(test_served),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
