/* slurm_fairtree.c: Slurm's Fair Tree fair share over the association tree root -> accounts -> users
 * (src/plugins/priority/multifactor/fair_tree.c, 22.05.8 and 284c3b95 alike).
 *
 * At each level an association's level fair share is LF = S / U, with S its shares over its siblings'
 * and U its usage over its parent's (U = 0, when the parent has no usage or it has none itself, gives
 * LF = infinity; S = 0 gives 0). Siblings are sorted by LF, highest first, and the tree is walked depth
 * first; each user association gets rank / (number of user associations) as its fairshare factor, the
 * rank counting down from that number. Ties, as _calc_tree_fs has them: sibling users with equal LF share
 * a rank; an account tied with the sibling before it starts its walk tied, so its first user shares the
 * previous user's rank. Slurm's _count_tied_accounts stops at the first account it looks at (it breaks on
 * a non-user), so tied accounts are never merged: each is walked on its own, in sort order. Our sort is
 * stable (accounts in tenant order, users in first-job order among equals), glibc's qsort is a merge sort
 * for arrays this small, so ties keep the assoc_mgr list order there too. */
#include "slurm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void slm_tree_init(slm_tree_t *t, int32_t naccts, const double *acct_shares, int32_t nusers, const int32_t *user_acct)
{
    memset(t, 0, sizeof *t);
    t->naccts = naccts;
    t->nusers = nusers;
    size_t na = (size_t)(naccts ? naccts : 1), nu = (size_t)(nusers ? nusers : 1);
    t->acct_shares = ds_xmalloc(na * sizeof *t->acct_shares);
    memcpy(t->acct_shares, acct_shares, (size_t)naccts * sizeof *t->acct_shares);
    t->acct_usage = ds_xcalloc(na, sizeof *t->acct_usage);
    t->user_usage = ds_xcalloc(nu, sizeof *t->user_usage);
    t->user_acct = ds_xmalloc(nu * sizeof *t->user_acct);
    memcpy(t->user_acct, user_acct, (size_t)nusers * sizeof *t->user_acct);
    t->acct_user0 = ds_xcalloc(na + 1, sizeof *t->acct_user0);
    t->acct_nusers = ds_xcalloc(na, sizeof *t->acct_nusers);
    t->by_acct = ds_xmalloc(nu * sizeof *t->by_acct);
    for (int32_t u = 0; u < nusers; u++) t->acct_nusers[user_acct[u]]++;
    for (int32_t a = 0; a < naccts; a++) t->acct_user0[a + 1] = t->acct_user0[a] + t->acct_nusers[a];
    int32_t *fill = ds_xcalloc(na, sizeof *fill);
    for (int32_t u = 0; u < nusers; u++) t->by_acct[t->acct_user0[user_acct[u]] + fill[user_acct[u]]++] = u;
    free(fill);
    t->fs = ds_xmalloc(nu * sizeof *t->fs);
    for (int32_t u = 0; u < nusers; u++) t->fs[u] = 1.0;
    t->acct_lf = ds_xcalloc(na, sizeof *t->acct_lf);
    t->user_lf = ds_xcalloc(nu, sizeof *t->user_lf);
    t->acct_rank = ds_xcalloc(na, sizeof *t->acct_rank);
    t->user_rank = ds_xcalloc(nu, sizeof *t->user_rank);
    t->scratch = ds_xmalloc(na * sizeof *t->scratch); /* accounts in rank order */
    for (int32_t a = 0; a < naccts; a++) t->scratch[a] = a;
}

void slm_tree_free(slm_tree_t *t)
{
    free(t->acct_shares);
    free(t->acct_usage);
    free(t->user_usage);
    free(t->user_acct);
    free(t->acct_user0);
    free(t->acct_nusers);
    free(t->by_acct);
    free(t->fs);
    free(t->acct_lf);
    free(t->user_lf);
    free(t->acct_rank);
    free(t->user_rank);
    free(t->scratch);
    memset(t, 0, sizeof *t);
}

void slm_tree_decay(slm_tree_t *t, long double f)
{
    for (int32_t a = 0; a < t->naccts; a++) t->acct_usage[a] *= f;
    for (int32_t u = 0; u < t->nusers; u++) t->user_usage[u] *= f;
}

/* Usage goes to the user association and every parent (decay_apply_new_usage walks up to root; root's
 * usage is the accounts' sum, computed where needed). */
void slm_tree_charge(slm_tree_t *t, int32_t user, long double amount)
{
    t->user_usage[user] += amount;
    t->acct_usage[t->user_acct[user]] += amount;
}

/* LF = S / U (_calc_assoc_fs): U = usage / parent usage, 0 when the parent has none. */
static long double level_fs(long double shares, long double level_shares, long double usage, long double parent)
{
    long double S = level_shares > 0 ? shares / level_shares : 0;
    long double U = parent > 0 ? usage / parent : 0;
    if (S == 0) return 0;
    return S / U; /* U == 0: infinity, a valid value */
}

/* Sorts by LF, highest first, ties in list order (index order): a total order, so the result does not
 * depend on where the sort starts. It starts from the last ranking's order, which usage moves little
 * between two updates: insertion sort is then about linear. */
static int before(const long double *lf, int32_t a, int32_t b)
{
    return lf[a] > lf[b] || (lf[a] == lf[b] && a < b);
}

static void sort_desc(int32_t *v, int32_t n, const long double *lf)
{
    for (int32_t i = 1; i < n; i++) {
        int32_t x = v[i], k = i;
        while (k > 0 && before(lf, x, v[k - 1])) v[k] = v[k - 1], k--;
        v[k] = x;
    }
}

void slm_tree_rank(slm_tree_t *t)
{
    long double root = 0, shares = 0;
    for (int32_t a = 0; a < t->naccts; a++) root += t->acct_usage[a], shares += t->acct_shares[a];
    int32_t *order = t->scratch, na = t->naccts; /* accounts in the last ranking's order */
    for (int32_t a = 0; a < t->naccts; a++) t->acct_lf[a] = level_fs(t->acct_shares[a], shares, t->acct_usage[a], root);
    sort_desc(order, na, t->acct_lf);
    uint32_t rank = (uint32_t)t->nusers, rnt = rank;
    const long double no_val = (long double)0xfffffffe; /* prev_level_fs starts at NO_VAL */
    long double prev_acct = no_val;
    for (int32_t i = 0; i < na; i++) {
        int32_t a = order[i];
        int acct_tied = prev_acct == t->acct_lf[a];
        t->acct_rank[a] = i;
        /* the account's users, sorted by their level fair share within it */
        int32_t nu = t->acct_nusers[a], *us = &t->by_acct[t->acct_user0[a]]; /* kept in rank order */
        for (int32_t k = 0; k < nu; k++)
            t->user_lf[us[k]] = level_fs(1, nu, t->user_usage[us[k]], t->acct_usage[a]);
        sort_desc(us, nu, t->user_lf);
        long double prev = no_val;
        for (int32_t k = 0; k < nu; k++) {
            int32_t u = us[k];
            int tied = (k == 0 && acct_tied) ? 1 : prev == t->user_lf[u];
            if (!tied) rank = rnt;
            t->user_rank[u] = (int32_t)rank;
            t->fs[u] = t->nusers ? (double)rank / (double)t->nusers : 0.0;
            rnt--;
            prev = t->user_lf[u];
        }
        prev_acct = t->acct_lf[a];
    }
}
