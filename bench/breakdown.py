#!/usr/bin/env python3
"""breakdown.py: where a schedule's queueing delay goes, from 'simulate --out DIR' jobs.csv files.

Each RUN is NAME=DIR (DIR holds jobs.csv; a 'simulate --policy a,b --out DIR' run writes DIR/<policy>/).
Prints, per run, the average queueing delay and each group's share of it (jobs x their mean queue / all
jobs), grouped by tenant (with its quota and active span), by GPUs per job, by duration, by preemptions,
and (with --tenants FILE) tenants' demand over their active span against their quota.

    bench/breakdown.py [--tenants FILE] [--markdown] qssf=/tmp/o/qssf ds=/tmp/o/deepshare ...
"""
import argparse
import csv
import math
import os
import sys
from collections import defaultdict


def load(d):
    p = os.path.join(d, "jobs.csv")
    with open(p) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("gpus", "submit", "start", "end", "queue", "jct", "duration", "preemptions", "colocated"):
            r[k] = int(float(r[k]))
        for k in ("queue_g", "queue_be"):
            r[k] = int(float(r.get(k) or 0))
    ev = os.path.join(d, "events.csv")
    events = []
    if os.path.exists(ev):
        with open(ev) as f:
            events = list(csv.DictReader(f))
    return rows, events


def size_class(g):
    return "1" if g == 1 else "2-4" if g <= 4 else "5-8" if g <= 8 else "9+"


def reclaims(rows, events):
    """Each preemption with the job started right after it in the same pass (the one it was for: a reclaim
    evicts, then starts its job), the victim's kind (yielded: G since it last started; borrowed: BE
    throughout), whose tenant it was for (own / other) and the victim's wait until it ran again.
    Returns {(kind, whose, victim size): [preemptions, re-wait seconds]}."""
    jobs = {r["job_id"]: r for r in rows}
    was_g, pend, waiting = {}, [], {}
    out = defaultdict(lambda: [0, 0])
    for e in events:
        j, t = e["job_id"], int(e["time"])
        if e["event"] == "start":
            if j in waiting:
                k, t0 = waiting.pop(j)
                out[k][1] += t - t0
            if pend:
                for v, y, tv in pend:
                    k = ("yielded" if y else "borrowed", "own" if jobs[v]["tenant"] == jobs[j]["tenant"] else "other",
                         size_class(jobs[v]["gpus"]))
                    out[k][0] += 1
                    waiting[v] = (k, tv)
                pend = []
            was_g[j] = e["class"] == "G"
        elif e["event"] == "promote":
            was_g[j] = True
        elif e["event"] == "preempt":
            pend.append((j, was_g.get(j, False), t))
    return out


def preemption_kinds(rows, events):
    """Each preemption: whether the victim had been G since it last started (it gave up its class by
    outliving its prediction, or a lowered quota demoted it: a 'yielded' run), or had run BE throughout
    (a borrower), with the victim's tenant. Returns {(kind, tenant): [preemptions, GPUs]}."""
    ten = {r["job_id"]: r["tenant"] for r in rows}
    gpus = {r["job_id"]: r["gpus"] for r in rows}
    was_g = {}
    out = defaultdict(lambda: [0, 0])
    for e in events:
        j = e["job_id"]
        if e["event"] == "start":
            was_g[j] = e["class"] == "G"
        elif e["event"] == "promote":
            was_g[j] = True
        elif e["event"] == "preempt":
            k = out["yielded" if was_g.get(j) else "borrowed", ten[j]]
            k[0] += 1
            k[1] += gpus[j]
    return out


def quotas(path):
    q = {}
    if not path:
        return q
    with open(path) as f:
        rd = csv.reader(f)
        head = next(rd)
        nodes = head[0] == "" and head[1].strip() == "num"  # Venus format: nodes of 8 GPUs
        for r in rd:
            if len(r) >= 2 and r[0]:
                q[r[0]] = int(float(r[1])) * (8 if nodes else 1)
    return q


SIZE = [(1, 1), (2, 2), (3, 4), (5, 8), (9, 16), (17, 32), (33, 64), (65, 10**9)]
DUR = [(0, 60), (60, 600), (600, 3600), (3600, 4 * 3600), (4 * 3600, 86400), (86400, 4 * 86400), (4 * 86400, 10**12)]


def fmt_dur(s):
    if s >= 86400:
        return f"{s / 86400:g}d"
    if s >= 3600:
        return f"{s / 3600:g}h"
    if s >= 60:
        return f"{s / 60:g}m"
    return f"{s}s"


def group_table(title, runs, key, order, md):
    """Rows: groups; columns per run: jobs (first run), mean queue, share of the overall average."""
    names = list(runs)
    stats = {}
    for n in names:
        g = defaultdict(lambda: [0, 0])
        for r in runs[n]:
            k = key(r)
            g[k][0] += 1
            g[k][1] += r["queue"]
        stats[n] = (g, len(runs[n]))
    keys = [k for k in order if any(k in stats[n][0] for n in names)]
    hdr = ["group", "jobs"] + [f"{n} avg q" for n in names] + [f"{n} share" for n in names]
    lines = []
    for k in keys:
        row = [str(k), str(stats[names[0]][0].get(k, [0, 0])[0])]
        for n in names:
            c, s = stats[n][0].get(k, [0, 0])
            row.append(f"{s / c:,.0f}" if c else "-")
        for n in names:
            c, s = stats[n][0].get(k, [0, 0])
            tot = stats[n][1]
            row.append(f"{s / tot:,.0f}" if tot else "-")
        lines.append(row)
    out(title, hdr, lines, md)


def out(title, hdr, lines, md):
    print()
    print(f"### {title}" if md else f"== {title}")
    if md:
        print()
        print("| " + " | ".join(hdr) + " |")
        print("| " + " | ".join("---" if i == 0 else "---:" for i in range(len(hdr))) + " |")
        for r in lines:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(h), *(len(r[i]) for r in lines)) if lines else len(h) for i, h in enumerate(hdr)]
        print("  ".join(h.rjust(w[i]) if i else h.ljust(w[i]) for i, h in enumerate(hdr)))
        for r in lines:
            print("  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(r)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tenants", help="tenants file (quota_gpus, or Venus ',num' nodes of 8)")
    ap.add_argument("--markdown", action="store_true", help="markdown tables")
    ap.add_argument("runs", nargs="+", help="NAME=DIR")
    a = ap.parse_args()
    runs, evs = {}, {}
    for spec in a.runs:
        if "=" not in spec:
            sys.exit(f"breakdown.py: '{spec}' is not NAME=DIR")
        n, d = spec.split("=", 1)
        try:
            runs[n], evs[n] = load(d)
        except (OSError, KeyError, ValueError) as e:
            sys.exit(f"breakdown.py: {d}: {e}")
    q = quotas(a.tenants)
    first = runs[next(iter(runs))]
    md = a.markdown

    hdr = ["run", "jobs", "avg queue", "p50", "p99", "avg JCT", "preemptions", "jobs preempted", "queue after a preemption"]
    lines = []
    for n, rows in runs.items():
        qs = sorted(r["queue"] for r in rows)
        nn = len(qs)
        p = lambda x: qs[max(0, math.ceil(x * nn) - 1)]
        pre = [r for r in rows if r["preemptions"] > 0]
        # a preempted job's queueing includes its waits after each preemption; the wait before its
        # first start is start - submit, the rest came after preemptions
        after = sum(r["queue"] - (r["start"] - r["submit"]) for r in pre)
        lines.append([n, str(nn), f"{sum(qs) / nn:,.0f}", f"{p(0.5):,}", f"{p(0.99):,}",
                      f"{sum(r['jct'] for r in rows) / nn:,.0f}", f"{sum(r['preemptions'] for r in rows):,}",
                      f"{len(pre):,}", f"{after / nn:,.0f}"])
    out("overall (queue after a preemption: its share of the average)", hdr, lines, md)

    # tenants: quota, active span, demand over that span
    span = defaultdict(lambda: [10**18, -1, 0.0, 0])
    for r in first:
        s = span[r["tenant"]]
        s[0] = min(s[0], r["submit"])
        s[1] = max(s[1], r["submit"])
        s[2] += r["gpus"] * r["duration"]
        s[3] += 1
    t0 = min(s[0] for s in span.values())
    t1 = max(s[1] for s in span.values())
    hdr = ["tenant", "quota", "jobs", "first day", "last day", "load over window", "load over its span"]
    lines = []
    for t in sorted(span):
        s = span[t]
        qq = q.get(t, 0)
        lw = s[2] / (qq * (t1 - t0)) if qq and t1 > t0 else float("nan")
        ls = s[2] / (qq * max(1, s[1] - s[0])) if qq else float("nan")
        lines.append([t, str(qq), str(s[3]), f"{(s[0] - t0) / 86400:.1f}", f"{(s[1] - t0) / 86400:.1f}",
                      f"{lw:.2f}", f"{ls:.2f}"])
    out("tenants: GPU-time offered / (quota x span)", hdr, lines, md)

    group_table("by tenant: avg queue, and its share of the overall average", runs, lambda r: r["tenant"],
                sorted(span), md)
    sk = lambda r: next(f"{lo}" if lo == hi else f"{lo}-{hi if hi < 10**9 else ''}" for lo, hi in SIZE
                        if lo <= r["gpus"] <= hi)
    group_table("by GPUs per job", runs, sk, [f"{lo}" if lo == hi else f"{lo}-{hi if hi < 10**9 else ''}"
                                               for lo, hi in SIZE], md)
    dk = lambda r: next(f"{fmt_dur(lo)}-{fmt_dur(hi) if hi < 10**12 else ''}" for lo, hi in DUR
                        if lo <= r["duration"] < hi)
    group_table("by duration", runs, dk, [f"{fmt_dur(lo)}-{fmt_dur(hi) if hi < 10**12 else ''}" for lo, hi in DUR], md)
    # queueing by class (DeepShare: its last classification of the waiting job)
    hdr = ["run", "avg queue", "as G", "as BE", "unclassified", "after a preemption"]
    lines = []
    for n, rows in runs.items():
        nn = len(rows)
        g = sum(r["queue_g"] for r in rows) / nn
        b = sum(r["queue_be"] for r in rows) / nn
        qq = sum(r["queue"] for r in rows) / nn
        aft = sum(r["queue"] - (r["start"] - r["submit"]) for r in rows) / nn
        lines.append([n, f"{qq:,.0f}", f"{g:,.0f}", f"{b:,.0f}", f"{qq - g - b:,.0f}", f"{aft:,.0f}"])
    out("queueing by class while waiting (shares of the average, s)", hdr, lines, md)
    for n, rows in runs.items():
        if not any(r["queue_g"] or r["queue_be"] for r in rows):
            continue
        nn = len(rows)
        by = defaultdict(lambda: [0, 0, 0])
        for r in rows:
            x = by[r["tenant"]]
            x[0] += r["queue_g"]
            x[1] += r["queue_be"]
            x[2] += r["queue"] - r["queue_g"] - r["queue_be"]
        lines = [[t, f"{by[t][0] / nn:,.0f}", f"{by[t][1] / nn:,.0f}", f"{by[t][2] / nn:,.0f}"] for t in sorted(by)]
        out(f"{n}: queueing by tenant and class (shares of the average, s)", ["tenant", "as G", "as BE", "unclassified"],
            lines, md)
    for n, rows in runs.items():
        if not evs[n]:
            continue
        pk_ = preemption_kinds(rows, evs[n])
        if not pk_:
            continue
        tens = sorted({t for _, t in pk_})
        lines = []
        for t in tens:
            y, b = pk_.get(("yielded", t), [0, 0]), pk_.get(("borrowed", t), [0, 0])
            lines.append([t, f"{y[0]:,}", f"{y[1]:,}", f"{b[0]:,}", f"{b[1]:,}"])
        ty = sum(v[0] for (k, _), v in pk_.items() if k == "yielded")
        tb = sum(v[0] for (k, _), v in pk_.items() if k == "borrowed")
        lines.append(["all", f"{ty:,}", "", f"{tb:,}", ""])
        out(f"{n}: preemptions by victim (yielded: G since its start, borrowed: BE throughout)",
            ["victim's tenant", "yielded", "GPUs", "borrowed", "GPUs"], lines, md)
    for n, rows in runs.items():
        if not evs[n]:
            continue
        rc = reclaims(rows, evs[n])
        if not rc:
            continue
        nn = len(rows)
        lines = []
        for k in sorted(rc):
            c, w = rc[k]
            lines.append([k[0], k[1], k[2], f"{c:,}", f"{w / c:,.0f}" if c else "-", f"{w / nn:,.0f}"])
        out(f"{n}: preemptions by victim (yielded: G since it last started; borrowed: BE throughout), whose "
            "tenant the GPUs went to, victim's GPUs; its wait until it ran again",
            ["victim", "for", "GPUs", "preemptions", "mean re-wait (s)", "share of avg queue (s)"], lines, md)
    pk = lambda r: "0" if r["preemptions"] == 0 else "1" if r["preemptions"] == 1 else "2-3" if r["preemptions"] <= 3 else "4+"
    group_table("by preemptions of the job (in each run's own schedule)", runs, pk, ["0", "1", "2-3", "4+"], md)


if __name__ == "__main__":
    main()
