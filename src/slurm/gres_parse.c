/* gres_parse.c: the GRES strings Slurm 22.05 gives deepshared, parsed without libslurm (so the tests read
 * the strings the local cluster showed): a job's tres_per_node ("gres:gpu:v100_g2:1,gres:shard:g3:1",
 * "gres:gpu:v100:2", "gres:gpu:2"), a running job's gres_detail index list, and a node's Gres and GresUsed
 * ("gpu:v100_g0:1,...,shard:v100_g0:2(S:0)"). */
#include "gres_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GP_MIN(a, b) ((a) < (b) ? (a) : (b))

static void copy(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src ? src : ""); }

/* "1-3,5" -> indices */
void sl_parse_idx_list(const char *s, sl_job_t *j)
{
    while (*s && *s != ')') {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s) return;
        s = end;
        if (*s == '-') { b = strtol(s + 1, &end, 10); s = end; }
        for (long i = a; i <= b && j->ngpu_idx < SL_MAX_GPUS; i++) j->gpu_idx[j->ngpu_idx++] = (int)i;
        if (*s == ',') s++;
        else break;
    }
}

void sl_parse_gres_detail(const char *detail, sl_job_t *j)
{
    for (const char *p = detail ? strstr(detail, "IDX:") : NULL; p; p = strstr(p + 4, "IDX:")) sl_parse_idx_list(p + 4, j);
    /* several typed entries: the engine wants them in index order, each once */
    int n = 0;
    for (int a = 0; a < j->ngpu_idx; a++) {
        int v = j->gpu_idx[a], b = n;
        while (b > 0 && j->gpu_idx[b - 1] > v) b--;
        if (b > 0 && j->gpu_idx[b - 1] == v) continue;
        memmove(j->gpu_idx + b + 1, j->gpu_idx + b, (size_t)(n - b) * sizeof *j->gpu_idx);
        j->gpu_idx[b] = v;
        n++;
    }
    j->ngpu_idx = n;
}

/* The count of one GRES entry "gpu:N", "gpu:TYPE:N" (after "gres:"), -1 when it has none. */
static long gres_count(const char *rest)
{
    const char *c = strrchr(rest, ':');
    c = c ? c + 1 : rest;
    char *end;
    long n = strtol(c, &end, 10);
    if (end == c || n < 0) return -1;
    return n;
}

static int name_char(char c)
{
    return c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int sl_pin_type(const char *rest, int *idx, char *model, size_t mn)
{
    size_t len = strcspn(rest, ":("), g = len;
    while (g > 0 && rest[g - 1] >= '0' && rest[g - 1] <= '9') g--;
    /* "g" and 1 to 3 digits, alone or after "MODEL_" */
    if (g == len || len - g > 3 || g == 0 || rest[g - 1] != 'g') return 0;
    size_t ml = g - 1;
    if (ml && (ml < 2 || rest[ml - 1] != '_')) return 0;
    ml = ml ? ml - 1 : 0;
    if (ml >= mn) return 0;
    for (size_t i = 0; i < ml; i++)
        if (!name_char(rest[i])) return 0;
    *idx = atoi(rest + g);
    memcpy(model, rest, ml);
    model[ml] = 0;
    return 1;
}

/* The model type of a GRES entry's rest "TYPE:N" (not a per-GPU type gN or MODEL_gN) into out (size n); 0
 * when it has none. */
static int model_type(const char *rest, char *out, size_t n)
{
    const char *c = strchr(rest, ':');
    size_t len = c ? (size_t)(c - rest) : 0;
    int idx;
    char m[64];
    if (!c || !len || len >= n || sl_pin_type(rest, &idx, m, sizeof m)) return 0;
    for (size_t i = 0; i < len; i++)
        if (!name_char(rest[i])) return 0;
    memcpy(out, rest, len);
    out[len] = 0;
    return 1;
}

/* Typed pins "gres:gpu:g2:1,gres:shard:g3:1" (or "gres:gpu:v100_g2:1": per-GPU types with the model) ->
 * indices; a request typed by model "gres:gpu:v100:2" ->
 * gpu_type; untyped "gres:gpu:N" -> untyped_gpus; every gpu
 * and shard entry, typed or not, counted into gres_gpus and gres_shards. */
void sl_parse_tres(const char *tres, sl_job_t *j)
{
    char buf[256];
    copy(buf, sizeof buf, tres);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strncmp(tok, "gres:", 5)) tok += 5;
        else if (!strncmp(tok, "gres/", 5)) tok += 5;
        int shard = !strncmp(tok, "shard:", 6);
        if (!shard && strncmp(tok, "gpu:", 4)) continue;
        char *rest = tok + (shard ? 6 : 4);
        int idx;
        char pm[32];
        long cnt, all = gres_count(rest);
        if (all > 0) {
            int *sum = shard ? &j->gres_shards : &j->gres_gpus;
            *sum = (int)GP_MIN((long)*sum + all, 1000000L);
        }
        if (strchr(rest, ':') && sl_pin_type(rest, &idx, pm, sizeof pm)) {
            if (j->ngpu_idx < SL_MAX_GPUS) j->gpu_idx[j->ngpu_idx++] = idx;
            j->on_shard |= shard;
        } else if (!shard && model_type(rest, j->gpu_type, sizeof j->gpu_type)) {
            /* counted into gres_gpus above */
        } else if (!shard && sscanf(rest, "%ld", &cnt) == 1) {
            j->untyped_gpus = (int)cnt;
        }
    }
}

/* One GRES list of a node: the count of each typed shard entry "shard:gN:C" goes to shards[N]
 * (entries absent leave it as it was); returns the GPUs its "gpu:..." entries add up to. With nd, the
 * model type of its gpu entries goes to nd->gpu_type (nd->types: how many distinct ones). */
int sl_scan_gres(const char *gres, int *shards, sl_node_t *nd)
{
    char buf[4096], *save = NULL;
    int gpus = 0;
    copy(buf, sizeof buf, gres);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *paren = strchr(tok, '(');
        if (paren) *paren = 0;
        int idx;
        char ty[sizeof nd->gpu_type];
        const char *c = strrchr(tok, ':');
        long cnt = c ? gres_count(c + 1) : -1;
        if (!strncmp(tok, "shard:", 6) && strchr(tok + 6, ':') && sl_pin_type(tok + 6, &idx, ty, sizeof ty) &&
            idx >= 0 && idx < SL_MAX_GPUS && cnt >= 0)
            shards[idx] = (int)GP_MIN(cnt, 1000000L);
        if (!strncmp(tok, "gpu:", 4) && c) {
            gpus += (int)GP_MIN(cnt > 0 ? cnt : 0, 1000000L);
            /* a model: from a per-GPU type "v100_g0" (deepshared pins them) or a model type "v100" (Slurm picks) */
            int pin = strchr(tok + 4, ':') && sl_pin_type(tok + 4, &idx, ty, sizeof ty) && ty[0];
            if (nd && pin) nd->model_pins = 1;
            else if (nd && model_type(tok + 4, ty, sizeof ty)) nd->model_picks = 1;
            if (nd && (pin || nd->model_picks) && ty[0] && strcmp(ty, nd->gpu_type)) {
                if (!nd->types++) snprintf(nd->gpu_type, sizeof nd->gpu_type, "%s", ty);
            }
        }
    }
    return gpus;
}
