/* datetime.h: calendar dates as Unix seconds, for trace files that stamp times as dates. */
#ifndef DS_DATETIME_H
#define DS_DATETIME_H

#include <stdint.h>

/* Days since 1970-01-01 of a proleptic Gregorian date, and back. */
int64_t ds_days_from_civil(int64_t y, int m, int d);
void ds_civil_from_days(int64_t days, int *y, int *m, int *d);
/* "YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]][zone]" as Unix seconds; zone is Z, +HH:MM, +HHMM, or one of " UTC",
 * " GMT", " PST", " PDT" (Philly's logs); without a zone the time is taken as UTC. Fractions of a second
 * are dropped and trailing blanks allowed. Returns 0, or -1 when s is not such a date. */
int ds_datetime_parse(const char *s, int64_t *out);
/* "YYYY-MM-DD HH:MM:SS" (UTC) of Unix seconds. */
void ds_datetime_format(int64_t t, char *buf, unsigned n);

#endif
