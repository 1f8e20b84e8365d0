/* usage_metrics.h: 'deepshare usage --metrics URL': deepshared's per-tenant history read from the Prometheus
 * server that scrapes it (src/cli/usage_metrics.c). */
#ifndef DS_CLI_USAGE_METRICS_H
#define DS_CLI_USAGE_METRICS_H

#include "deepshare/usage.h"

/* Reads [from, to) at step seconds from the Prometheus at url (match: extra label matchers inside {}, e.g.
 * job="deepshared", or NULL) into d's samples and d->preempted; *incomplete counts the (time, tenant)
 * points lacking one of the six gauges. 0, or -1 with msg saying why (unreachable, HTTP error, an answer
 * the reader refused, no samples at all). timeout: seconds per request. */
int ds_usage_read_metrics(ds_usage_data_t *d, const char *url, const char *match, int64_t from, int64_t to,
                          int64_t step, double timeout, int64_t *incomplete, char *msg, size_t n);

#endif
