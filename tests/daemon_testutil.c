/* daemon_testutil.c: helpers shared by the fake-Slurm tests of deepshared's core (see daemon_testutil.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "daemon_testutil.h"

double dt_metric(daemon_t *d, const char *line)
{
    char *m = daemon_metrics(d);
    char key[200];
    snprintf(key, sizeof key, "\n%s ", line);
    const char *p = strstr(m, key);
    double v = p ? atof(p + strlen(key)) : -1;
    free(m);
    return v;
}

int dt_explain_has(daemon_t *d, uint32_t id, const char *text)
{
    char *x = daemon_explain(d, id);
    int has = x && strstr(x, text);
    if (!has) print_message("explain %u: %s", id, x ? x : "(null)\n");
    free(x);
    return has;
}

const ds_jstate_t *dt_jstate(daemon_t *d, uint32_t id)
{
    int32_t s = daemon_slot_of(d, id);
    assert_true(s >= 0);
    return &d->e->js[s];
}
