/* import_philly.c: reads Microsoft Philly's cluster_job_log (msr-fiddle/philly-traces), a JSON array of jobs
 * with their scheduling attempts. The file is streamed: a small scanner cuts each job out of the array (at most
 * DS_IMP_MAX_JSON_JOB bytes, checked as it reads) before jansson parses it, so memory stays bounded whatever
 * the file holds, every message names the line where the job starts and a bad job can be skipped on its own. */
#include "deepshare/import.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The stream: buf[0, len) holds the unread tail of the file from the current job on; s indexes it. */
typedef struct scan {
    FILE *f;
    const char *path;
    char *buf;
    size_t len, cap, s;
    long line;
    int eof, ioerr;
} scan_t;

#define BLOCK 65536

/* Makes sure byte s is in the buffer, discarding what lies before *keep (the start of the job being cut out,
 * which then moves to the front: *keep becomes 0); 1 when there is a byte, 0 at the end of the file (or after a
 * read error, in ioerr), -1 when the bytes from *keep on reach the bound of one job. */
static int fill(scan_t *sc, size_t *keep)
{
    if (sc->s < sc->len) return 1;
    if (sc->eof) return 0;
    if (*keep > 0) {
        memmove(sc->buf, sc->buf + *keep, sc->len - *keep);
        sc->len -= *keep;
        sc->s -= *keep;
        *keep = 0;
    }
    if (sc->cap - sc->len < BLOCK) {
        if (sc->cap >= DS_IMP_MAX_JSON_JOB + BLOCK) return -1;
        sc->cap = sc->cap ? 2 * sc->cap : 4 * BLOCK;
        if (sc->cap > DS_IMP_MAX_JSON_JOB + BLOCK) sc->cap = DS_IMP_MAX_JSON_JOB + BLOCK;
        sc->buf = ds_xrealloc(sc->buf, sc->cap);
    }
    size_t n = fread(sc->buf + sc->len, 1, sc->cap - sc->len, sc->f);
    if (n == 0) {
        sc->eof = 1;
        sc->ioerr = ferror(sc->f);
        return 0;
    }
    sc->len += n;
    return 1;
}

/* Skips blanks between jobs; returns the next byte, or -1 at the end of the file. */
static int skip_ws(scan_t *sc)
{
    for (;;) {
        size_t keep = sc->s;
        if (fill(sc, &keep) <= 0) return -1;
        char ch = sc->buf[sc->s];
        if (ch == '\n') sc->line++;
        else if (ch != ' ' && ch != '\t' && ch != '\r') return (unsigned char)ch;
        sc->s++;
    }
}

/* Advances past one JSON object starting at '{'; 0 with the object at buf[*start, s), or -1 when the input
 * ends first, -2 when the object is longer than DS_IMP_MAX_JSON_JOB, -3 on a NUL byte (binary input). */
static int skip_object(scan_t *sc, size_t *start)
{
    int depth = 0, in_str = 0;
    *start = sc->s;
    for (;; sc->s++) {
        int got = fill(sc, start);
        if (got <= 0) return got < 0 ? -2 : -1;
        char ch = sc->buf[sc->s];
        if (ch == '\0') return -3;
        if (ch == '\n') sc->line++;
        if (in_str) {
            if (in_str == 2) in_str = 1; /* the character after a backslash */
            else if (ch == '\\') in_str = 2;
            else if (ch == '"') in_str = 0;
        } else if (ch == '"') in_str = 1;
        else if (ch == '{' || ch == '[') depth++;
        else if ((ch == '}' || ch == ']') && --depth == 0) {
            sc->s++;
            return 0;
        }
    }
}

static int philly_state(const char *s)
{
    if (!strcasecmp(s, "Pass")) return DS_IMP_COMPLETED;
    if (!strcasecmp(s, "Killed")) return DS_IMP_CANCELLED;
    if (!strcasecmp(s, "Failed")) return DS_IMP_FAILED;
    return DS_IMP_OTHER;
}

static const char *str_member(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A time member: 0 with *out set, 1 when absent ("None" or null: the trace's logging gaps), DS_EPARSE. */
static int time_member(json_t *o, const char *key, const char *where, const char *path, long line, int64_t *out,
                       ds_error_t *err)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return 1;
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    if (s && (!*s || !strcmp(s, "None"))) return 1;
    int is_date;
    if (!s || ds_imp_parse_time(s, out, &is_date) || !is_date) {
        ds_error_set(err, path, line, where, "%s%s%s is not a date (YYYY-MM-DD HH:MM:SS)", s ? "'" : "",
                     s ? s : "a non-string value", s ? "'" : "");
        return DS_EPARSE;
    }
    return 0;
}

/* Where a job's figures come from, for ds_imp_keep's messages: GPUs and run time add up over its attempts. */
static const ds_imp_cols_t philly_cols = {"attempts[].detail[].gpus", NULL, "attempts"};

/* One job object into j; DS_OK, DS_EPARSE (err set) or 1 when it never ran or has not finished. */
static int read_job(ds_import_t *im, const ds_import_opts_t *o, json_t *job, const char *path, long line,
                    ds_imp_job_t *j, ds_error_t *err)
{
    if (!json_is_object(job)) {
        ds_error_set(err, path, line, NULL, "a job is not a JSON object");
        return DS_EPARSE;
    }
    static const char *const keys[] = {"status", "vc", "user", "submitted_time"};
    for (int k = 0; k < 4; k++)
        if (!str_member(job, keys[k])) {
            ds_error_set(err, path, line, keys[k], json_object_get(job, keys[k]) ? "not a string" : "missing key");
            return DS_EPARSE;
        }
    json_t *id = json_object_get(job, "jobid");
    char idbuf[64];
    if (json_is_integer(id)) {
        j->has_num_id = 1;
        j->num_id = json_integer_value(id);
        snprintf(idbuf, sizeof idbuf, "%lld", (long long)j->num_id);
        j->orig = ds_strtab_intern(&im->ids, idbuf);
    } else if (json_is_string(id) && json_string_value(id)[0]) {
        int rc = ds_imp_name(&im->ids, json_string_value(id), path, line, "jobid", &j->orig, err);
        if (rc) return rc;
    } else {
        ds_error_set(err, path, line, "jobid", id ? "not a string" : "missing key");
        return DS_EPARSE;
    }
    j->state = (uint8_t)philly_state(str_member(job, "status"));
    const char *tcol = o->tenant_by ? o->tenant_by : "vc";
    int rc = ds_imp_tenant(im, j, str_member(job, tcol), path, line, tcol, err);
    if (rc) return rc;
    const char *user = str_member(job, "user")[0] ? str_member(job, "user") : "-";
    if ((rc = ds_imp_name(&im->users, user, path, line, "user", &j->user, err))) return rc;
    if ((rc = time_member(job, "submitted_time", "submitted_time", path, line, &j->submit, err)) != 0) {
        if (rc == 1) ds_error_set(err, path, line, "submitted_time", "no submission time");
        return DS_EPARSE;
    }
    json_t *att = json_object_get(job, "attempts");
    if (!json_is_array(att)) {
        ds_error_set(err, path, line, "attempts", att ? "not a list" : "missing key");
        return DS_EPARSE;
    }
    size_t n = json_array_size(att);
    int64_t sum = 0, last = -1;
    int32_t gpus = 0;
    for (size_t a = 0; a < n; a++) {
        json_t *at = json_array_get(att, a);
        char where[64];
        snprintf(where, sizeof where, "attempts[%zu]", a);
        if (!json_is_object(at)) {
            ds_error_set(err, path, line, where, "not an object");
            return DS_EPARSE;
        }
        int64_t s = 0, e = 0;
        char w2[96];
        snprintf(w2, sizeof w2, "%s.start_time", where);
        int rs = time_member(at, "start_time", w2, path, line, &s, err);
        snprintf(w2, sizeof w2, "%s.end_time", where);
        int re = time_member(at, "end_time", w2, path, line, &e, err);
        if (rs < 0 || re < 0) return DS_EPARSE;
        json_t *detail = json_object_get(at, "detail");
        int32_t g = 0;
        for (size_t d = 0; d < json_array_size(detail); d++) {
            json_t *m = json_array_get(detail, d);
            json_t *gl = json_object_get(m, "gpus");
            if (!json_is_array(gl)) {
                ds_error_set(err, path, line, where, "detail[%zu].gpus is %s", d, gl ? "not a list" : "missing");
                return DS_EPARSE;
            }
            g += (int32_t)json_array_size(gl);
        }
        if (g > gpus) gpus = g;
        last = -1;
        if (rs == 0 && re == 0) {
            if (e < s) {
                ds_error_set(err, path, line, w2, "ends before it starts");
                return DS_EPARSE;
            }
            sum += e - s;
            last = e - s;
        }
    }
    /* no attempt, or a last attempt without both times: never ran, or still running at the snapshot */
    if (last < 0) return 1;
    j->duration = o->philly_last_attempt ? last : sum;
    j->gpus = gpus;
    return DS_OK;
}

int ds_import_philly(ds_import_t *im, const ds_import_opts_t *o, const char *path, ds_error_t *err)
{
    scan_t sc = {0};
    sc.path = path;
    sc.line = 1;
    if (!(sc.f = fopen(path, "rb"))) {
        ds_error_set(err, path, 0, NULL, "cannot open: %s", strerror(errno));
        return DS_EIO;
    }
    im->src = path;
    int rc = DS_OK, ch = skip_ws(&sc);
    if (ch != '[') {
        ds_error_set(err, path, sc.line, NULL, "%s: expected a JSON list of jobs ('[')",
                     ch < 0 ? (sc.ioerr ? "read error" : "empty file") : "not Philly's cluster_job_log");
        rc = sc.ioerr ? DS_EIO : DS_EPARSE;
        goto done;
    }
    sc.s++;
    for (int first = 1;; first = 0) {
        ch = skip_ws(&sc);
        if (ch == ']') break;
        if (!first && ch >= 0) {
            if (ch != ',') {
                ds_error_set(err, path, sc.line, NULL, "expected ',' or ']' after a job");
                rc = DS_EPARSE;
                break;
            }
            sc.s++;
            ch = skip_ws(&sc);
        }
        if (ch < 0) {
            ds_error_set(err, path, sc.line, NULL, "the list of jobs is not closed (truncated file?)");
            rc = ds_imp_bad_row(im, o, DS_EPARSE, err);
            break;
        }
        if (ch != '{') {
            ds_error_set(err, path, sc.line, NULL, "expected a job object ('{')%s", ch == 0 ? ", found a NUL byte (binary file?)" : "");
            rc = DS_EPARSE;
            break;
        }
        long line = sc.line;
        if ((rc = ds_imp_count_row(im, path, line, err))) break;
        size_t at;
        int cut = skip_object(&sc, &at);
        if (cut == -1) {
            ds_error_set(err, path, line, NULL, "the job starting here is cut off at the end of the file (truncated file?)");
            rc = ds_imp_bad_row(im, o, DS_EPARSE, err);
            break;
        }
        if (cut < 0) { /* a job's bound or binary bytes: nothing after it can be trusted to resynchronise */
            ds_error_set(err, path, line, NULL, cut == -2 ? "the job starting here is longer than %d bytes, stopped reading there"
                                                           : "NUL byte in the job starting here (binary file?)",
                         DS_IMP_MAX_JSON_JOB);
            rc = DS_EPARSE;
            break;
        }
        json_error_t je;
        json_t *job = json_loadb(sc.buf + at, sc.s - at, 0, &je);
        ds_imp_job_t j;
        memset(&j, 0, sizeof j);
        j.line = line;
        int r;
        if (!job) {
            ds_error_set(err, path, line + je.line - 1, NULL, "column %d: %s", je.column, je.text);
            r = DS_EPARSE;
        } else {
            r = read_job(im, o, job, path, line, &j, err);
            json_decref(job);
        }
        if (r == 1) ds_imp_not_run(im);
        else if (r == 0) r = ds_imp_keep(im, o, &j, path, &philly_cols, err);
        if (r < 0 && (rc = ds_imp_bad_row(im, o, r, err))) break;
    }
    if (rc == DS_OK && ch == ']') {
        sc.s++;
        if (skip_ws(&sc) >= 0) {
            ds_error_set(err, path, sc.line, NULL, "text after the list of jobs");
            rc = DS_EPARSE;
        }
    }
    if (rc == DS_OK && sc.ioerr) {
        ds_error_set(err, path, sc.line, NULL, "read error");
        rc = DS_EIO;
    }
done:
    fclose(sc.f);
    free(sc.buf);
    im->clock_is_unix = 1;
    return rc;
}
