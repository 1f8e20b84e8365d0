/* testutil.h: helpers shared by the tests: temp files, small hand-made traces, data-dir lookup. */
#ifndef DS_TESTUTIL_H
#define DS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "deepshare/sim.h"
#include "deepshare/trace.h"

/* Writes text to a fresh temporary file and returns its path (static buffer per call slot). */
const char *tu_write_temp(const char *name, const char *text);
/* Path inside DS_DATA_DIR, or NULL when the data set is absent (the caller skips). */
const char *tu_data(const char *rel);
/* Reads the Venus trace and its tenants from DS_DATA_DIR into t (initialised here); 0 when the data set is
 * absent (t is then empty and the caller skips), 1 when loaded. */
int tu_venus(ds_trace_t *t);
/* Builds a trace from "tenant:quota" pairs and job rows "id tenant gpus submit duration". */
void tu_trace(ds_trace_t *t, const char *tenants, const char *jobs);
/* Reads a whole file (NUL-terminated, length in *len when len is not NULL); NULL when unreadable. */
char *tu_slurp(const char *path, size_t *len);
/* Makes the folder $TMPDIR/<prefix>_<pid> (TMPDIR defaults to /tmp) and writes its path to dir. */
void tu_make_dir(const char *prefix, char *dir, size_t n);
/* Removes a folder made by tu_make_dir with all it holds; 0 on success (a cmocka group teardown). */
int tu_remove_dir(const char *dir);
/* Asserts an error record names the file (a part of its path), line, field and a part of the message;
 * prints what it got first, so a failure shows the whole record. */
void tu_expect_error(const ds_error_t *err, const char *file_part, long line, const char *field, const char *needle);
/* Runs c (invariants checked) on t; asserts success. */
void tu_sim(const ds_trace_t *t, ds_sim_config_t *c, ds_sim_result_t *r);
/* Runs one policy in mode with parameters kv ("name", "value", ..., NULL; may be NULL), invariants checked;
 * asserts that every parameter is taken and the run succeeds. */
/* A config of the policy with kv's "key", "value", ... pairs (NULL-ended) set; NULL for a policy without
 * parameters. Free with ops->config_free. */
void *tu_policy_config(const ds_policy_ops_t *ops, const char *const *kv);
void tu_run_kv(const ds_trace_t *t, const char *policy, ds_mode_t mode, const char *const *kv, ds_sim_result_t *r);
/* Runs one policy with invariants checked; asserts success. */
void tu_run(const ds_trace_t *t, const char *policy, ds_mode_t mode, ds_sim_result_t *r);

#endif
