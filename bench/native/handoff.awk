# handoff.awk: from a replay's live.csv (runs in wall seconds), the hand-off latency: for each run that
# started after its job had been waiting, the time from the last end of another run on the same node
# (which freed the GPUs it took) to its start, counted when the job was already waiting at that end.
# Prints: runs, mean, p50, p90 (wall seconds). usage: awk -F, -f handoff.awk DIR/live.csv
NR == 1 { next }
{ n++; sub_t[n] = $4; st[n] = $5; en[n] = $6; node[n] = $7; job[n] = $1 }
END {
  m = 0
  for (i = 1; i <= n; i++) {
    if (node[i] < 0) continue
    best = -1
    for (k = 1; k <= n; k++)
      if (k != i && node[k] == node[i] && en[k] <= st[i] && en[k] > best) best = en[k]
    if (best < 0 || best <= sub_t[i]) continue
    # a waiting job's start after a release on its node (it waited for that release or a later one)
    m++; h[m] = st[i] - best; sum += h[m]
  }
  if (!m) { print 0, 0, 0, 0; exit }
  for (i = 2; i <= m; i++) { x = h[i]; j = i - 1; while (j >= 1 && h[j] > x) { h[j + 1] = h[j]; j-- } h[j + 1] = x }
  p50 = h[int(0.5 * m + 0.999999)]; p90 = h[int(0.9 * m + 0.999999)]
  printf "%d %.3f %.3f %.3f\n", m, sum / m, p50, p90
}
