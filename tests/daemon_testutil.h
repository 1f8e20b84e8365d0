/* daemon_testutil.h: helpers shared by the tests that drive deepshared's core (the ds_daemon library) against
 * the in-memory Slurm of fake_slurm.c: a metric's value, an explain line, a job's engine state. */
#ifndef DS_DAEMON_TESTUTIL_H
#define DS_DAEMON_TESTUTIL_H

#include <stdint.h>

#include "daemon/daemon.h"

/* The value of one metric line ("name{labels} value") of the daemon's /metrics; -1 when absent. */
double dt_metric(daemon_t *d, const char *line);
/* 1 when the daemon's explanation of job id contains text; otherwise prints the explanation and gives 0,
 * so a failing assertion shows what the policy said. */
int dt_explain_has(daemon_t *d, uint32_t id, const char *text);
/* The engine state of a job the daemon tracks (asserts that it does). */
const ds_jstate_t *dt_jstate(daemon_t *d, uint32_t id);

#endif
