# dispatch_steps.awk: where deepshared's starts spend their time, from its log (verbose = 1) and the replay's
# live.csv (wall seconds), for each job's first run: submit -> the daemon sees it (its poll), the pass that
# decided its start -> the dispatch update returned (the engine and the updates of that pass), the update
# returned -> the job's script started (slurmctld's next 1-second loop, then the launch). Prints one line of
# medians and 90th percentiles; with -v each=1 instead each first start's decision -> script start, one a
# line (the live start latency the benchmark's simulated twin draws from).
# usage: TZ=UTC awk [-v each=1] -f dispatch_steps.awk DIR/deepshared.log DIR/live.csv
function ts(s,    d) { # 2026-12-01T18:16:52.744Z -> epoch seconds
  d = substr(s, 1, 4) " " substr(s, 6, 2) " " substr(s, 9, 2) " " substr(s, 12, 2) " " substr(s, 15, 2) " " substr(s, 18, 2)
  return mktime(d) + substr(s, 20, 4)
}
function q(a, n, p,    i, j, x, b) {
  if (!n) return "-"
  for (i = 1; i <= n; i++) b[i] = a[i]
  for (i = 2; i <= n; i++) { x = b[i]; j = i - 1; while (j >= 1 && b[j] > x) { b[j + 1] = b[j]; j-- } b[j + 1] = x }
  return sprintf("%.2f", b[int(p * n + 0.999999)])
}
FNR == NR {
  if ($3 == "job" && $0 ~ / queued$/) { if (!($4 in seen)) seen[$4] = ts($1) }
  else if ($3 == "job" && $5 == "->" && !($4 in disp)) disp[$4] = ts($1)
  else if ($3 == "job" && $5 == "running:" && !($4 in pd)) { pd[$4] = $14 }
  next
}
FNR == 1 { FS = ","; $0 = $0; next }
{
  id = $2
  if (id in done || !(id in disp)) next
  done[id] = 1
  if (id in seen) { ns++; sv[ns] = seen[id] - $4 }
  nd++; dv[nd] = $5 - disp[id]
  if (id in pd) { np++; pv[np] = pd[id]; tv[np] = pd[id] + $5 - disp[id] }
}
END {
  if (each) { for (i = 1; i <= np; i++) printf "%.6f\n", tv[i]; exit }
  printf "first starts: submit -> seen p50 %s p90 %s s (%d jobs); pass -> dispatched p50 %s p90 %s s; dispatched -> script start p50 %s p90 %s s (%d); decision -> script start p50 %s p90 %s s (%d)\n",
    q(sv, ns, 0.5), q(sv, ns, 0.9), ns, q(pv, np, 0.5), q(pv, np, 0.9), q(dv, nd, 0.5), q(dv, nd, 0.9), nd, q(tv, np, 0.5), q(tv, np, 0.9), np
}
