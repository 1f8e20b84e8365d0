/* lease.h: active/standby for deepshared: a leader lease in etcd (its v3 HTTP/JSON gateway) with the lease's
 * revision as the fencing epoch. One instance leads; the others wait and take over within one lease period
 * when it stops renewing (docs/deepshared.md, Active/standby). */
#ifndef DS_DAEMON_LEASE_H
#define DS_DAEMON_LEASE_H

#include <stddef.h>
#include <stdint.h>

typedef struct lease {
    char url[256];         /* etcd client URL, e.g. http://127.0.0.1:2379; "" = no lease (one instance) */
    char key[128];         /* the leader key */
    char holder[128];      /* this instance's name (the key's value while it leads) */
    int ttl;               /* seconds: the lease period, the longest a standby takes to lead after the leader died */
    int granted;           /* seconds: the TTL etcd granted the lease of the attempt (lease_store_ttl asked) */
    double timeout;        /* seconds per request to etcd */
    int64_t id;            /* etcd lease ID of the current attempt or leadership, 0 none */
    int64_t epoch;         /* the leader key's create revision while this instance leads, 0 when it does not:
                              grows with every new leader, so a dispatch's epoch= names who made it */
    int leading;
    double valid_until;    /* monotonic seconds: this instance may write to Slurm until then (a renewal sent
                              at t keeps the lease until t + ttl at least on the server; we stop well before) */
    double t_renewed;      /* monotonic seconds of the last renewal (or acquisition) sent */
    double t_attempt;      /* monotonic seconds of the last acquisition attempt */
    double t_grant;        /* monotonic seconds the lease of the attempt was asked for (its TTL runs from then) */
    char leader[128];      /* the holder seen while standing by, "" none or unknown */
    int64_t takeovers;     /* times this instance became the leader */
    int64_t lost;          /* times it lost the lease */
    int64_t store_errors;  /* requests to etcd that failed */
    int store_down;        /* the last request failed (logged once) */
} lease_t;

/* The TTL asked of etcd for a period of ttl seconds: one second less (at least etcd's shortest, 2 s), the
 * second being the budget of what follows the expiry before a standby schedules: etcd revokes expired
 * leases in rounds of 0.5 s, the standby looks every lease_poll_interval, then rebuilds and runs its pass. */
int lease_store_ttl(int ttl);
/* Seconds between a standby's looks at the leader key (0.1 s; ttl/10 for a shorter period). */
double lease_poll_interval(const lease_t *l);
/* Sets the defaults (no lease; key /deepshared/leader; ttl 5 s; holder "HOST:PID"). */
void lease_default(lease_t *l);
/* One step, at every loop of the daemon: a standby tries to take the lease (at most every ttl/10 s), a
 * leader renews it every ttl/3 s and checks that the key is still its own. Returns 1 while this instance
 * leads (it may write to Slurm: lease_valid), 0 while it stands by; err says what failed (etcd unreachable,
 * the lease lost). A leader whose renewal fails keeps leading only until valid_until, then stands by. */
int lease_tick(lease_t *l, double now, char *err, size_t errn);
/* Whether this instance may write to Slurm now: it leads and its last renewal is recent enough that etcd
 * still holds its lease (now < valid_until). The fence every Slurm write checks (sl_set_fence). */
int lease_valid(const lease_t *l, double now);
/* Gives the lease up (a clean stop): a standby takes over at its next attempt instead of after ttl. */
void lease_release(lease_t *l);
/* The epoch= a dispatch's admin comment carries (0 when none). */
int64_t lease_comment_epoch(const char *admin_comment);

#endif
