/* import_gavel.c: converts Gavel's throughput tables (stanford-futuredata/gavel, MIT; ../shared/data/gavel)
 * into the speed table (speeds.csv: a workload's throughput per GPU type and GPU count) and a typed colocation
 * profile (pairs.csv: colocate_info.csv's columns plus gpu_type), the inputs of a heterogeneous replay. */
#include "deepshare/csv.h"
#include "deepshare/import.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GAVEL_MAX_BYTES (64 << 20) /* the published tables are 1.2 MB */

/* Gavel's job types and their data sets (its job table, scheduler/utils.py and the OSDI'20 paper, Table 2). */
static const char *dataset_of(const char *model)
{
    static const char *const map[][2] = {{"ResNet-18", "CIFAR-10"}, {"ResNet-50", "ImageNet"},
                                         {"Transformer", "Multi30k"}, {"LM", "Wikitext-2"},
                                         {"Recommendation", "ML-20M"}, {"A3C", "Pong"},
                                         {"CycleGAN", "monet2photo"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i][0], model)) return map[i][1];
    return "";
}

typedef struct gkey {
    char model[32];
    int32_t batch, sf;
} gkey_t;

/* Parses "('ResNet-18 (batch size 16)', 1)" or "('A3C', 1)": model, batch (0 when the name has none), GPUs. */
static int parse_key(const char *k, gkey_t *out)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(k);
    if (n < 8 || strncmp(k, "('", 2) || k[n - 1] != ')') return -1;
    const char *q = strstr(k + 2, "', ");
    if (!q) return -1;
    char name[96];
    size_t len = (size_t)(q - (k + 2));
    if (len == 0 || len >= sizeof name) return -1;
    memcpy(name, k + 2, len);
    name[len] = '\0';
    char *end;
    long sf = strtol(q + 3, &end, 10);
    if (end == q + 3 || strcmp(end, ")") || sf < 1 || sf > DS_MAX_JOB_GPUS) return -1;
    out->sf = (int32_t)sf;
    char *b = strstr(name, " (batch size ");
    if (b) {
        long bs = strtol(b + 13, &end, 10);
        if (end == b + 13 || strcmp(end, ")") || bs < 1 || bs > (1 << 30)) return -1;
        out->batch = (int32_t)bs;
        *b = '\0';
    }
    size_t nl = strlen(name);
    /* the CSV readers trim a field: a name that begins or ends in white space would not read back as written */
    if (!nl || nl >= sizeof out->model || strpbrk(name, ",\"\r\n") || isspace((unsigned char)name[0]) ||
        isspace((unsigned char)name[nl - 1]))
        return -1;
    memcpy(out->model, name, nl + 1);
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int open_tmp(const char *dir, const char *name, char *tmp, size_t n, FILE **f, ds_error_t *err)
{
    snprintf(tmp, n, "%s/.%s.tmp", dir, name);
    if (!(*f = fopen(tmp, "w"))) {
        ds_error_set(err, tmp, 0, NULL, "cannot write: %s", strerror(errno));
        return DS_EIO;
    }
    return DS_OK;
}

static int close_tmp(FILE *f, const char *tmp, ds_error_t *err)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        ds_error_set(err, tmp, 0, NULL, "write failed: %s", strerror(errno));
        return DS_EIO;
    }
    return DS_OK;
}

/* Throughput of a job key alone ("null") on one type's object; 0 when absent or not a positive number. */
static double alone(json_t *type_obj, const char *key)
{
    json_t *v = json_object_get(type_obj, key);
    double x = v ? json_number_value(json_object_get(v, "null")) : 0;
    return x > 0 && x < 1e9 ? x : 0;
}

/* Reads one of Gavel's tables (bounded, duplicate keys refused). */
static json_t *load_table(const char *path, ds_error_t *err)
{
    struct stat st;
    if (stat(path, &st)) {
        ds_error_set(err, path, 0, NULL, "cannot open: %s", strerror(errno));
        return NULL;
    }
    if (st.st_size > GAVEL_MAX_BYTES) {
        ds_error_set(err, path, 0, NULL, "%lld bytes: more than a throughput table (limit %d MiB)", (long long)st.st_size,
                     GAVEL_MAX_BYTES >> 20);
        return NULL;
    }
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        ds_error_set(err, path, je.line, NULL, "column %d: %s", je.column, je.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        ds_error_set(err, path, 1, NULL, "expected an object {gpu_type: {job: {...}}} (Gavel's throughput table)");
        json_decref(root);
        return NULL;
    }
    return root;
}

/* Writes the table's throughputs alone to fs and its pairs' retentions to fp (either may be NULL). */
static int convert(json_t *root, const char *path, FILE *fs, FILE *fp, ds_gavel_summary_t *sum, ds_error_t *err)
{
    int rc = DS_OK, ntypes = 0;
    const char *tname;
    json_t *tobj;
    json_object_foreach(root, tname, tobj) {
        /* the same GPUs with a job spread over more servers: not a GPU type */
        if (ends_with(tname, "_unconsolidated")) {
            if (fs) sum->skipped_types++;
            continue;
        }
        if (!json_is_object(tobj)) {
            ds_error_set(err, path, 0, tname, "expected an object of job types");
            return DS_EPARSE;
        }
        if (strlen(tname) >= DS_GTYPE_NAME || !tname[0] || strpbrk(tname, ",\"\r\n :")) {
            ds_error_set(err, path, 0, tname, "not a GPU type name");
            return DS_EPARSE;
        }
        if (ntypes == DS_MAX_GPU_TYPES) {
            ds_error_set(err, path, 0, tname, "more than %d GPU types", DS_MAX_GPU_TYPES);
            return DS_EPARSE;
        }
        ntypes++;
        if (fs) sum->types++;
        /* each job type's position in the table, so that a pair listed from both sides is written once */
        json_t *pos = json_object();
        /* the workload each job type names: two spellings of one ("batch size  64", "01") would be two rows of
         * one workload, which the speed table's reader refuses */
        json_t *named = json_object();
        const char *kk;
        json_t *vv;
        size_t np = 0;
        json_object_foreach(tobj, kk, vv) json_object_set_new(pos, kk, json_integer((json_int_t)np++));
        const char *ka;
        json_t *va;
        size_t ia = 0;
        json_object_foreach(tobj, ka, va) {
            ia++;
            gkey_t a;
            if (parse_key(ka, &a) || !json_is_object(va)) {
                ds_error_set(err, path, 0, ka, "on %s: not a Gavel job type \"('<name>', <scale factor>)\" with an object", tname);
                rc = DS_EPARSE;
                break;
            }
            char canon[96];
            snprintf(canon, sizeof canon, "%s|%d|%d", a.model, a.batch, a.sf);
            json_t *first = json_object_get(named, canon);
            if (first) {
                ds_error_set(err, path, 0, ka, "on %s: names the same workload (%s, batch %d, %d GPU%s) as %s", tname,
                             a.model, a.batch, a.sf, a.sf == 1 ? "" : "s", json_string_value(first));
                rc = DS_EPARSE;
                break;
            }
            json_object_set_new(named, canon, json_string(ka));
            double na = alone(tobj, ka);
            if (na <= 0) {
                if (fs) sum->unmeasured++;
                continue;
            }
            if (fs) {
                fprintf(fs, "%s,%s,%d,0,%d,%s,%.9g\n", a.model, dataset_of(a.model), a.batch, a.sf, tname, na);
                sum->speeds++;
            }
            if (!fp) continue;
            const char *kb;
            json_t *vb;
            json_object_foreach(va, kb, vb) {
                if (!strcmp(kb, "null")) continue;
                gkey_t b;
                if (parse_key(kb, &b) || !json_is_array(vb) || json_array_size(vb) != 2) {
                    ds_error_set(err, path, 0, kb, "on %s beside %s: not a job type with [throughput, throughput]", tname, ka);
                    rc = DS_EPARSE;
                    break;
                }
                /* each unordered pair once: the table lists it from both sides, with the numbers swapped */
                json_t *ib = json_object_get(pos, kb);
                json_t *rev = json_object_get(json_object_get(tobj, kb), ka);
                if (ib && (size_t)json_integer_value(ib) < ia - 1 && rev) continue;
                double x = json_number_value(json_array_get(vb, 0)), y = json_number_value(json_array_get(vb, 1));
                double nb = alone(tobj, kb);
                if (!(x >= 0 && y >= 0 && x < 1e9 && y < 1e9) || nb <= 0) {
                    sum->unmeasured++;
                    continue;
                }
                /* measured only for one GPU each in the published tables; [0, 0] there: the pair does not fit */
                if (a.sf != 1 || b.sf != 1) {
                    if (x > 0 || y > 0) sum->multi_gpu_pairs++;
                    continue;
                }
                /* [0, 0]: "does not fit, or was not run" (Gavel); left out, so such a pair is unprofiled
                 * (SPEC 7.2: its ground truth is the simulator's missing_rho) */
                if (x == 0 || y == 0) {
                    sum->unfit++;
                    continue;
                }
                /* a retention is a speed ratio: above 100 it is a unit mistake, which the pairs reader refuses too */
                if (x / na > 100 || y / nb > 100) {
                    ds_error_set(err, path, 0, kb, "on %s: %s beside %s runs at %g and %g times their speeds alone: above "
                                 "100, a unit mistake", tname, ka, kb, x / na, y / nb);
                    rc = DS_EPARSE;
                    break;
                }
                fprintf(fp, "%s,%s,%d,0,%.6f,%s,%s,%d,0,%.6f,0,0,0,%s\n", a.model, dataset_of(a.model), a.batch, x / na,
                        b.model, dataset_of(b.model), b.batch, y / nb, tname);
                sum->pairs++;
            }
            if (rc) break;
        }
        json_decref(pos);
        json_decref(named);
        if (rc) break;
    }
    return rc;
}

int ds_import_gavel(const char *speeds_path, const char *pairs_path, const char *dir, ds_gavel_summary_t *sum,
                    ds_error_t *err)
{
    memset(sum, 0, sizeof *sum);
    if (!pairs_path) pairs_path = speeds_path;
    json_t *rs = load_table(speeds_path, err), *rp = NULL;
    if (!rs) return DS_EPARSE;
    if (!(rp = strcmp(pairs_path, speeds_path) ? load_table(pairs_path, err) : json_incref(rs))) {
        json_decref(rs);
        return DS_EPARSE;
    }
    char ts[1200], tp[1200];
    FILE *fs = NULL, *fp = NULL;
    int rc = open_tmp(dir, "speeds.csv", ts, sizeof ts, &fs, err);
    if (!rc && (rc = open_tmp(dir, "pairs.csv", tp, sizeof tp, &fp, err))) {
        fclose(fs);
        remove(ts);
    }
    if (rc) {
        json_decref(rs);
        json_decref(rp);
        return rc;
    }
    fputs("model,dataset,batchsize,amp,gpus,gpu_type,throughput\n", fs);
    fputs("model1,dataset1,batchsize1,amp1,speed1,model2,dataset2,batchsize2,amp2,speed2,gpu_util,gmem_util,gmem,gpu_type\n",
          fp);
    /* a pair's retention divides its throughputs by those alone of the same table: they were measured together */
    rc = convert(rs, speeds_path, fs, NULL, sum, err);
    if (!rc) rc = convert(rp, pairs_path, NULL, fp, sum, err);
    json_decref(rs);
    json_decref(rp);
    int cs = close_tmp(fs, ts, err), cp = close_tmp(fp, tp, err);
    if (!rc) rc = cs ? cs : cp;
    if (!rc && !sum->speeds) {
        ds_error_set(err, speeds_path, 0, NULL, "no throughput found (is this one of Gavel's *_throughputs.json?)");
        rc = DS_EPARSE;
    }
    char fss[1200], fps[1200];
    snprintf(fss, sizeof fss, "%s/speeds.csv", dir);
    snprintf(fps, sizeof fps, "%s/pairs.csv", dir);
    if (!rc && (rename(ts, fss) || rename(tp, fps))) {
        ds_error_set(err, dir, 0, NULL, "cannot move the written files into place: %s", strerror(errno));
        rc = DS_EIO;
    }
    if (rc) remove(ts), remove(tp);
    return rc;
}
