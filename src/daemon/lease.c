/* lease.c: the leader lease of deepshared in etcd, over its v3 HTTP/JSON gateway (libcurl, jansson). A standby
 * takes the leader key in a transaction that succeeds only while the key does not exist, bound to a lease
 * of ttl - 1 seconds (lease_store_ttl); the leader keeps the lease alive every quarter of that. etcd drops the
 * key when the lease expires, whatever the old leader does (killed, paused, cut off), and the standby, which
 * looks every 0.1 s, takes it: it leads within one period of ttl s. The key's create revision, which grows
 * with every new leader, is the fencing epoch. Why not etcd's watch: its HTTP gateway (3.4) holds a watch's
 * events back until the stream ends (tried: a delete seen 7 s late), so a standby polls with a plain read,
 * which costs etcd no raft write (a failed create-if-absent transaction would, one every poll). Why etcd and not the
 * accounting MariaDB's GET_LOCK: docs/deepshared.md, Active/standby. */
#include "daemon/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deepshare/common.h"

void lease_default(lease_t *l)
{
    memset(l, 0, sizeof *l);
    snprintf(l->key, sizeof l->key, "/deepshared/leader");
    l->ttl = 5;
    l->timeout = 1.0;
    char host[64] = "";
    if (gethostname(host, sizeof host - 1)) snprintf(host, sizeof host, "host");
    snprintf(l->holder, sizeof l->holder, "%s:%ld", host, (long)getpid());
}

int64_t lease_comment_epoch(const char *ac)
{
    const char *p = ac ? strstr(ac, "epoch=") : NULL;
    return p ? strtoll(p + 6, NULL, 10) : 0;
}

int lease_store_ttl(int ttl) { return DS_MAX(2, ttl - 1); }

double lease_poll_interval(const lease_t *l) { return DS_MIN(0.1, l->ttl / 10.0); }

/* The TTL the server holds the lease for (granted: etcd may raise what was asked to its minimum). */
static int held_ttl(const lease_t *l) { return l->granted > 0 ? l->granted : lease_store_ttl(l->ttl); }

int lease_valid(const lease_t *l, double now) { return l->leading && now < l->valid_until; }

#ifdef DS_HAVE_CURL
#include <curl/curl.h>
#include <jansson.h>

/* The margin kept before the lease could expire on the server: a renewal sent at t keeps it there until
 * t + TTL at the earliest; this instance stops writing at t + TTL - margin. */
static double margin(const lease_t *l) { return DS_MAX(0.5, 0.2 * held_ttl(l)); }

static void b64(const char *s, char *out, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t len = strlen(s), o = 0;
    for (size_t i = 0; i < len && o + 5 < n; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)s[i] << 16;
        if (i + 1 < len) v |= (uint32_t)(unsigned char)s[i + 1] << 8;
        if (i + 2 < len) v |= (unsigned char)s[i + 2];
        out[o++] = t[(v >> 18) & 63];
        out[o++] = t[(v >> 12) & 63];
        out[o++] = i + 1 < len ? t[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? t[v & 63] : '=';
    }
    out[o] = 0;
}

static void unb64(const char *s, char *out, size_t n)
{
    size_t o = 0;
    uint32_t v = 0;
    int bits = 0;
    for (; *s && *s != '=' && o + 1 < n; s++) {
        const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *c = strchr(t, *s);
        if (!c) break;
        v = (v << 6) | (uint32_t)(c - t);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            unsigned char ch = (unsigned char)((v >> bits) & 0xff);
            out[o++] = ch >= 32 && ch < 127 ? (char)ch : '?'; /* shown in logs: printable only */
        }
    }
    out[o] = 0;
}

typedef struct body { char *p; size_t n; int over; } body_t;

static size_t on_data(char *ptr, size_t sz, size_t nm, void *ud)
{
    body_t *b = ud;
    size_t k = sz * nm;
    if (b->n + k > 65536) { b->over = 1; return 0; }
    b->p = ds_xrealloc(b->p, b->n + k + 1);
    memcpy(b->p + b->n, ptr, k);
    b->n += k;
    b->p[b->n] = 0;
    return k;
}

/* POSTs a JSON body to URL/v3/PATH; returns the parsed answer (NULL with err filled on failure). */
static json_t *call(lease_t *l, const char *path, const char *body, char *err, size_t errn)
{
    CURL *c = curl_easy_init();
    if (!c) { snprintf(err, errn, "libcurl: cannot start a request"); return NULL; }
    char url[400];
    snprintf(url, sizeof url, "%s/v3/%s", l->url, path);
    body_t b = {NULL, 0, 0};
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(l->timeout * 1000));
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    CURLcode cc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    json_t *j = NULL;
    if (cc != CURLE_OK) snprintf(err, errn, "etcd %.100s: %.100s", url, curl_easy_strerror(cc));
    else if (b.over) snprintf(err, errn, "etcd %.100s: answer too large", url);
    else if (code != 200) snprintf(err, errn, "etcd %.100s: HTTP %ld: %.120s", url, code, b.p ? b.p : "");
    else {
        json_error_t je;
        j = json_loadb(b.p ? b.p : "", b.n, 0, &je);
        if (!j) snprintf(err, errn, "etcd %.100s: answer is not JSON: %.80s", url, je.text);
    }
    free(b.p);
    l->store_errors += !j;
    return j;
}

/* etcd writes 64-bit numbers as JSON strings; absent fields are 0. */
static int64_t num(json_t *o, const char *key)
{
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (json_is_string(v)) return strtoll(json_string_value(v), NULL, 10);
    if (json_is_integer(v)) return (int64_t)json_integer_value(v);
    return 0;
}

/* The leader key as etcd has it: its create revision, lease and value (0/"" when absent); -1 on failure. */
static int read_key(lease_t *l, int64_t *crev, int64_t *lid, char *val, size_t vn, char *err, size_t errn)
{
    char k64[200], body[300];
    b64(l->key, k64, sizeof k64);
    snprintf(body, sizeof body, "{\"key\":\"%s\"}", k64);
    json_t *j = call(l, "kv/range", body, err, errn);
    if (!j) return -1;
    json_t *kv = json_array_get(json_object_get(j, "kvs"), 0);
    *crev = num(kv, "create_revision");
    *lid = num(kv, "lease");
    val[0] = 0;
    if (kv && json_is_string(json_object_get(kv, "value"))) unb64(json_string_value(json_object_get(kv, "value")), val, vn);
    json_decref(j);
    return 0;
}

static int acquire(lease_t *l, double now, char *err, size_t errn)
{
    char body[1400], k64[200], v64[200];
    /* a plain read first: while the key is there (nearly always), nothing is written to etcd */
    int64_t crev, lid;
    if (read_key(l, &crev, &lid, l->leader, sizeof l->leader, err, errn)) return -1;
    if (crev) return 0;
    /* a lease granted for the attempt: reused while it has more than half its period left */
    if (!l->id || now - l->t_grant > held_ttl(l) / 2.0) {
        snprintf(body, sizeof body, "{\"TTL\":%d}", lease_store_ttl(l->ttl));
        json_t *j = call(l, "lease/grant", body, err, errn);
        if (!j) return -1;
        l->id = num(j, "ID");
        l->granted = (int)DS_MAX(0, DS_MIN(num(j, "TTL"), 1 << 20));
        json_decref(j);
        l->t_grant = now;
        if (!l->id) { snprintf(err, errn, "etcd granted no lease"); return -1; }
    }
    b64(l->key, k64, sizeof k64);
    b64(l->holder, v64, sizeof v64);
    snprintf(body, sizeof body,
             "{\"compare\":[{\"key\":\"%s\",\"target\":\"CREATE\",\"result\":\"EQUAL\",\"create_revision\":\"0\"}],"
             "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\",\"lease\":\"%lld\"}}],"
             "\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}",
             k64, k64, v64, (long long)l->id, k64);
    json_t *j = call(l, "kv/txn", body, err, errn);
    if (!j) return -1;
    int won = json_is_true(json_object_get(j, "succeeded"));
    if (won) {
        l->epoch = num(json_object_get(j, "header"), "revision");
        l->leading = 1;
        l->valid_until = l->t_grant + held_ttl(l) - margin(l);
        l->t_renewed = l->t_grant;
        l->takeovers++;
        l->leader[0] = 0;
    } else {
        json_t *kv = json_array_get(json_object_get(json_object_get(json_array_get(json_object_get(j, "responses"), 0),
                                                                    "response_range"), "kvs"), 0);
        json_t *v = kv ? json_object_get(kv, "value") : NULL;
        l->leader[0] = 0;
        if (json_is_string(v)) unb64(json_string_value(v), l->leader, sizeof l->leader);
    }
    json_decref(j);
    return won;
}

/* Keeps the lease alive and checks that the key is still this instance's; 1 renewed, 0 lost, -1 unknown. */
static int renew(lease_t *l, double now, char *err, size_t errn)
{
    char body[100];
    snprintf(body, sizeof body, "{\"ID\":\"%lld\"}", (long long)l->id);
    json_t *j = call(l, "lease/keepalive", body, err, errn);
    if (!j) return -1;
    int64_t ttl = num(json_object_get(j, "result"), "TTL");
    json_decref(j);
    if (ttl <= 0) { snprintf(err, errn, "etcd: the lease expired"); return 0; }
    int64_t crev, lid;
    char val[128];
    if (read_key(l, &crev, &lid, val, sizeof val, err, errn)) return -1;
    if (crev != l->epoch || lid != l->id) {
        snprintf(err, errn, "etcd: the leader key is %s (revision %lld)", crev ? val : "gone", (long long)crev);
        return 0;
    }
    l->t_renewed = now;
    l->valid_until = now + (double)DS_MIN(ttl, held_ttl(l)) - margin(l);
    return 1;
}

void lease_release(lease_t *l)
{
    if (!l->url[0] || !l->leading) return;
    char body[100], err[300];
    snprintf(body, sizeof body, "{\"ID\":\"%lld\"}", (long long)l->id);
    json_t *j = call(l, "lease/revoke", body, err, sizeof err);
    json_decref(j);
    l->leading = 0;
    l->epoch = 0;
    l->id = 0;
}
#else
static int acquire(lease_t *l, double now, char *err, size_t errn)
{
    (void)l, (void)now;
    snprintf(err, errn, "built without libcurl (libcurl4-openssl-dev): no leader lease");
    return -1;
}
static int renew(lease_t *l, double now, char *err, size_t errn) { return acquire(l, now, err, errn); }
void lease_release(lease_t *l) { (void)l; }
#endif

int lease_tick(lease_t *l, double now, char *err, size_t errn)
{
    err[0] = 0;
    if (!l->url[0]) return 1;
    if (!l->leading) {
        if (l->t_attempt > 0 && now - l->t_attempt < lease_poll_interval(l)) return 0;
        l->t_attempt = now;
        int rc = acquire(l, now, err, errn);
        l->store_down = rc < 0;
        return rc > 0;
    }
    /* renew every quarter of the TTL (a loop stalled up to TTL - margin - TTL/4 s keeps writing), and at
     * once when the last renewal is too old (woken from a pause) */
    if (now - l->t_renewed < held_ttl(l) / 4.0 && now < l->valid_until) return 1;
    int rc = renew(l, now, err, errn);
    l->store_down = rc < 0;
    if (rc == 1 || (rc < 0 && now < l->valid_until)) return 1;
    l->leading = 0;
    l->epoch = 0;
    l->id = 0;
    l->lost++;
    l->t_attempt = now;
    return 0;
}
