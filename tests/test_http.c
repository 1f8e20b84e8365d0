/* test_http.c: deepshared's HTTP endpoints without Slurm (report.c stubbed): /healthz says 503 when
 * slurmctld is unreachable, /metrics answers from the published snapshot while the state lock is held,
 * /explain gives up on the lock after a bounded wait, and slow clients from one address cannot fill the
 * server (per-address and total connection limits, idle timeout). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "daemon/daemon.h"

/* report.c stand-ins: the endpoints' plumbing is under test, not the figures. */
static int metrics_calls;
char *daemon_metrics(daemon_t *d)
{
    (void)d;
    metrics_calls++;
    char *s = malloc(64);
    snprintf(s, 64, "deepshare_test_metric %d\n", metrics_calls);
    return s;
}
char *daemon_explain(daemon_t *d, uint32_t id)
{
    (void)d;
    if (id != 42) return NULL;
    char *s = malloc(32);
    snprintf(s, 32, "job 42: waits\n");
    return s;
}

double daemon_theta(const daemon_t *d) { (void)d; return 0.95; }

/* progress_post.c stand-in: the body as http.c hands it over */
static char posted[8192];
static size_t posted_len;
int daemon_progress_post(daemon_t *d, const char *body, size_t len, char *msg, size_t n)
{
    (void)d;
    posted_len = len < sizeof posted ? len : sizeof posted - 1;
    memcpy(posted, body, posted_len);
    posted[posted_len] = 0;
    snprintf(msg, n, "seen %zu bytes\n", len);
    return !strcmp(posted, "CRED") ? 200 : 401;
}

static daemon_t d;
static int port;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Connects from source address src (NULL: any) to the daemon; -1 on failure. */
static int dial(const char *src)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return -1;
    struct timeval tv = {10, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (src) {
        struct sockaddr_in b = {.sin_family = AF_INET};
        inet_pton(AF_INET, src, &b.sin_addr);
        if (bind(s, (struct sockaddr *)&b, sizeof b)) { close(s); return -1; }
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(s, (struct sockaddr *)&a, sizeof a)) { close(s); return -1; }
    return s;
}

/* METHOD path with extra header lines (each ending in CRLF, or NULL); returns the status code (0: no
 * answer) and the whole answer, headers included, in all (size n). */
static int request(const char *method, const char *path, const char *extra, char *all, size_t n)
{
    int s = dial(NULL);
    if (s < 0) return 0;
    char req[512];
    int len = snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nHost: x\r\n%s\r\n", method, path, extra ? extra : "");
    if (write(s, req, (size_t)len) != len) { close(s); return 0; }
    size_t got = 0;
    ssize_t r;
    while (got + 1 < n && (r = read(s, all + got, n - 1 - got)) > 0) got += (size_t)r;
    close(s);
    all[got] = '\0';
    int code = 0;
    if (sscanf(all, "HTTP/1.%*d %d", &code) != 1) return 0;
    return code;
}

/* POST path with a body (and extra header lines or NULL); returns the status code (0: no answer). */
static int post_body(const char *path, const char *extra, const char *body, size_t blen)
{
    int s = dial(NULL);
    if (s < 0) return 0;
    char req[512], buf[4096];
    int len = snprintf(req, sizeof req, "POST %s HTTP/1.0\r\nHost: x\r\nContent-Length: %zu\r\n%s\r\n", path, blen,
                       extra ? extra : "");
    if (write(s, req, (size_t)len) != len) { close(s); return 0; }
    for (size_t off = 0; off < blen;) {
        ssize_t w = write(s, body + off, blen - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof buf && (r = read(s, buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
    close(s);
    buf[got] = '\0';
    int code = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1) return 0;
    return code;
}

/* GET path; returns the status code (0: no answer) and the body in body (size n). */
static int get(const char *path, char *body, size_t n)
{
    int s = dial(NULL);
    if (s < 0) return 0;
    char req[256], buf[8192];
    int len = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", path);
    if (write(s, req, (size_t)len) != len) { close(s); return 0; }
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof buf && (r = read(s, buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
    close(s);
    buf[got] = '\0';
    int code = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1) return 0;
    const char *b = strstr(buf, "\r\n\r\n");
    if (body) snprintf(body, n, "%s", b ? b + 4 : "");
    return code;
}

static int setup(void **st)
{
    (void)st;
    memset(&d, 0, sizeof d);
    dconfig_default(&d.cfg);
    pthread_mutex_init(&d.lock, NULL);
    ds_error_t err;
    for (int tries = 0; tries < 20; tries++) {
        port = 20000 + (int)((getpid() * 7 + tries * 131) % 30000);
        d.cfg.listen_port = port;
        if (http_start(&d, &err) == DS_OK) return 0;
    }
    return -1;
}

static int teardown(void **st)
{
    (void)st;
    http_stop();
    return 0;
}

static void test_health_and_snapshot(void **st)
{
    (void)st;
    char body[4096];
    assert_int_equal(get("/healthz", body, sizeof body), 503); /* no pass yet */
    assert_int_equal(get("/metrics", body, sizeof body), 503);
    d.slurm_up = 1;
    pthread_mutex_lock(&d.lock);
    http_publish(&d, 1);
    pthread_mutex_unlock(&d.lock);
    assert_int_equal(get("/healthz", body, sizeof body), 200);
    assert_int_equal(get("/metrics", body, sizeof body), 200);
    assert_non_null(strstr(body, "deepshare_test_metric 1"));
    /* slurmctld goes away: health says so in the status, metrics keep the last snapshot */
    http_publish_health(0);
    assert_int_equal(get("/healthz", body, sizeof body), 503);
    assert_non_null(strstr(body, "unreachable"));
    assert_int_equal(get("/metrics", body, sizeof body), 200);
    /* the main loop holds the state lock across a slow libslurm call: metrics still answer at once */
    pthread_mutex_lock(&d.lock);
    double t0 = now_s();
    assert_int_equal(get("/metrics", body, sizeof body), 200);
    assert_true(now_s() - t0 < 1.0);
    t0 = now_s();
    assert_int_equal(get("/explain/42", body, sizeof body), 503); /* bounded wait, then busy */
    double waited = now_s() - t0;
    assert_true(waited >= 1.5 && waited < 5.0);
    pthread_mutex_unlock(&d.lock);
    assert_int_equal(get("/explain/42", body, sizeof body), 200);
    assert_int_equal(get("/explain/7", body, sizeof body), 404);
    assert_int_equal(get("/explain/-1", body, sizeof body), 400);
    assert_int_equal(get("/explain/99999999999", body, sizeof body), 400);
    http_publish_health(1);
}

/* 40 silent connections from one address (127.0.0.2): at most the per-address limit is kept, and another
 * client still gets /metrics and /healthz promptly. */
static void test_slow_clients(void **st)
{
    (void)st;
    int s[40], n = 0;
    for (int i = 0; i < 40; i++) {
        s[i] = dial("127.0.0.2");
        if (s[i] < 0) skip(); /* no 127.0.0.2 on this box */
        n++;
    }
    usleep(300 * 1000);
    /* refused connections are closed by the server: count those still open (read would block) */
    int open_ = 0;
    for (int i = 0; i < n; i++) {
        struct timeval tv = {0, 200 * 1000};
        setsockopt(s[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char c;
        ssize_t r = recv(s[i], &c, 1, 0);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) open_++;
    }
    fprintf(stderr, "slow clients kept open: %d of %d\n", open_, n);
    assert_true(open_ <= 8);
    char body[4096];
    double t0 = now_s();
    assert_int_equal(get("/metrics", body, sizeof body), 200);
    assert_int_equal(get("/healthz", body, sizeof body), 200);
    assert_true(now_s() - t0 < 2.0);
    for (int i = 0; i < n; i++) close(s[i]);
}

/* With a read token, every endpoint but /healthz and the static files asks for it, as a bearer header
 * (or ?token=); a wrong, shorter or longer token is refused; nothing can be changed (GET only). */
static void test_read_token(void **st)
{
    (void)st;
    static char all[65536];
    const char *tok = "0123456789abcdef-TOKEN";
    http_set_token(tok);
    char good[128], lower[128], wrong[128], prefix[128], longer[128], q[160];
    snprintf(good, sizeof good, "Authorization: Bearer %s\r\n", tok);
    snprintf(lower, sizeof lower, "authorization: bearer %s\r\n", tok);
    snprintf(wrong, sizeof wrong, "Authorization: Bearer 0123456789abcdef-TOKEM\r\n");
    snprintf(prefix, sizeof prefix, "Authorization: Bearer 0123456789abcdef-TOKE\r\n");
    snprintf(longer, sizeof longer, "Authorization: Bearer %sX\r\n", tok);
    static const char *const guarded[] = {"/metrics", "/explain/42", "/", "/api/status"};
    for (size_t i = 0; i < sizeof guarded / sizeof guarded[0]; i++) {
        const char *p = guarded[i];
        assert_int_equal(request("GET", p, NULL, all, sizeof all), 401);
        assert_non_null(strstr(all, "WWW-Authenticate: Bearer realm=\"deepshared\""));
        assert_null(strstr(all, "deepshare_test_metric"));
        assert_int_equal(request("GET", p, wrong, all, sizeof all), 401);
        assert_int_equal(request("GET", p, prefix, all, sizeof all), 401);
        assert_int_equal(request("GET", p, longer, all, sizeof all), 401);
        assert_int_equal(request("GET", p, "Authorization: Basic dTpw\r\n", all, sizeof all), 401);
        assert_int_equal(request("GET", p, good, all, sizeof all), 200);
        assert_int_equal(request("GET", p, lower, all, sizeof all), 200);
        snprintf(q, sizeof q, "%s?token=%s", p, tok);
        assert_int_equal(request("GET", q, NULL, all, sizeof all), 200);
        snprintf(q, sizeof q, "%s?token=%.10s", p, tok);
        assert_int_equal(request("GET", q, NULL, all, sizeof all), 401);
    }
    /* the page keeps the token in its own links, and only the right one */
    snprintf(q, sizeof q, "/?token=%s", tok);
    assert_int_equal(request("GET", q, NULL, all, sizeof all), 200);
    char link[160];
    snprintf(link, sizeof link, "href=\"/api/status?token=%s\"", tok);
    assert_non_null(strstr(all, link));
    assert_int_equal(request("GET", "/", good, all, sizeof all), 200);
    assert_non_null(strstr(all, "href=\"/api/status\""));
    /* open: liveness and the page's static files carry no data */
    assert_int_equal(request("GET", "/healthz", NULL, all, sizeof all), 200);
    assert_int_equal(request("GET", "/static/status.css", NULL, all, sizeof all), 200);
    /* read-only, token or not, but for a job's own progress report: the munge credential is its
     * authentication (a job has no read token), the trailing newline of munge(1) dropped */
    assert_int_equal(post_body("/api/progress", NULL, "CRED\n", 5), 200);
    assert_int_equal(posted_len, 4);
    assert_int_equal(post_body("/api/progress", NULL, "NOPE", 4), 401);
    static char big[5000];
    memset(big, 'x', sizeof big);
    assert_int_equal(post_body("/api/progress", NULL, big, sizeof big), 413);
    assert_int_equal(request("GET", "/api/progress", good, all, sizeof all), 404);
    assert_int_equal(request("POST", "/metrics", good, all, sizeof all), 405);
    assert_int_equal(request("DELETE", "/explain/42", good, all, sizeof all), 405);
    http_set_token("");
    assert_int_equal(request("GET", "/metrics", NULL, all, sizeof all), 200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_health_and_snapshot),
        cmocka_unit_test(test_read_token),
        cmocka_unit_test(test_slow_clients),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
