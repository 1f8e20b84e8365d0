/* datetime.c: calendar dates to Unix seconds and back, for traces stamped with dates (Helios, Philly, Acme,
 * Lucid's throughput series). */
#include "deepshare/datetime.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define DAY 86400

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
int64_t ds_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void ds_civil_from_days(int64_t z, int *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (!isdigit((unsigned char)**p)) return -1;
        v = v * 10 + (**p - '0');
    }
    *out = v;
    return 0;
}

int ds_datetime_parse(const char *s, int64_t *out)
{
    const char *p = s;
    int y, mo, d, h = 0, mi = 0, se = 0;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d)) return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31) return -1;
    if (*p == ' ' || *p == 'T') {
        p++;
        if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi)) return -1;
        if (*p == ':') {
            p++;
            if (digits(&p, 2, &se)) return -1;
            if (*p == '.') /* fractions of a second are dropped: the simulator counts whole seconds */
                for (p++; isdigit((unsigned char)*p); p++) {}
        }
        if (h > 23 || mi > 59 || se > 60) return -1;
    }
    int64_t t = ds_days_from_civil(y, mo, d) * DAY + h * 3600 + mi * 60 + se;
    if (*p == ' ' && strlen(p) == 4) { /* a zone name as Philly's logs write them (p[4] may lie past the end) */
        static const struct { const char *name; int off; } zones[] = {{"UTC", 0}, {"GMT", 0}, {"PST", -8}, {"PDT", -7}};
        size_t z = 0;
        while (z < 4 && strcmp(p + 1, zones[z].name)) z++;
        if (z == 4) return -1;
        t -= zones[z].off * 3600;
        p += 4;
    } else if (*p == 'Z') p++;
    else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, zh, zm = 0;
        if (digits(&p, 2, &zh)) return -1;
        if (*p == ':') p++;
        if (*p && digits(&p, 2, &zm)) return -1;
        t -= sign * (zh * 3600 + zm * 60); /* local time minus its offset is UTC */
    }
    while (*p == ' ') p++;
    if (*p) return -1;
    *out = t;
    return 0;
}

void ds_datetime_format(int64_t t, char *buf, unsigned n)
{
    int64_t days = t / DAY - (t % DAY < 0), sec = t - days * DAY;
    int y, m, d;
    ds_civil_from_days(days, &y, &m, &d);
    snprintf(buf, n, "%04d-%02d-%02d %02d:%02d:%02d", y, m, d, (int)(sec / 3600), (int)(sec / 60 % 60),
             (int)(sec % 60));
}
