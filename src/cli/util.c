/* util.c: option value parsing and error printing shared by the subcommands. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int ds_parse_i64(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || errno || *end || v < min || v > max) {
        fprintf(stderr, "deepshare: option %s: '%s' is not an integer in [%lld, %lld]\n", opt, s ? s : "",
                (long long)min, (long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

int ds_parse_f64(const char *opt, const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || !*s || errno || *end || !isfinite(v) || v < min || v > max) {
        fprintf(stderr, "deepshare: option %s: '%s' is not a number in [%g, %g]\n", opt, s ? s : "", min, max);
        return -1;
    }
    *out = v;
    return 0;
}

void ds_die_error(const ds_error_t *err)
{
    char buf[1200];
    ds_error_format(err, buf, sizeof buf);
    fprintf(stderr, "deepshare: %s\n", buf);
}
