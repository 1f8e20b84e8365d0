#!/bin/sh
# check_cycles.sh: the call circles the compiler cannot see, read from static libraries with nm, as
# check_layers.sh reads the layers: inside one library, a file that uses a function or variable another
# file defines depends on it, and these dependencies must form no circle, so that each folder stacks its
# files (DeepShare's stages over the bookkeeping they share, the ops and the pass on top; the daemon's
# flows over its logging and policy setup). Each circle is printed with the names that tie it.
# Usage: check_cycles.sh LIB.a...
set -eu
tmp=${TMPDIR:-/tmp}/cycles.$$
trap 'rm -f "$tmp".*' EXIT
status=0
for lib in "$@"; do
  # "member: type symbol" lines; a member is an object file (its name is its source file's)
  nm -A --defined-only "$lib" | awk '$2 ~ /^[TDBRCVWG]$/ { split($1, a, ":"); print $3, a[2] }' | sort -u > "$tmp.def"
  nm -A -u "$lib" | awk '{ split($1, a, ":"); print a[2], $NF }' | sort -u > "$tmp.use"
  # edges "from to symbol": from uses symbol, which to defines
  awk 'NR == FNR { def[$1] = $2; next } ($2 in def) && def[$2] != $1 { print $1, def[$2], $2 }' "$tmp.def" "$tmp.use" \
    > "$tmp.edges"
  # strongly connected components (Tarjan); every one of more than one file is a circle
  out=$(awk '
    { if (!($1 SUBSEP $2 in seen)) { seen[$1, $2] = 1; nout[$1]++; adj[$1, nout[$1]] = $2 }
      names[$1, $2] = names[$1, $2] (names[$1, $2] == "" ? "" : ", ") $3; node[$1] = 1; node[$2] = 1 }
    function visit(v,    i, w) {
      idx[v] = low[v] = ++counter; stack[++sp] = v; on[v] = 1
      for (i = 1; i <= nout[v]; i++) {
        w = adj[v, i]
        if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
        else if (on[w] && idx[w] < low[v]) low[v] = idx[w]
      }
      if (low[v] == idx[v]) {
        n = 0
        do { w = stack[sp--]; on[w] = 0; comp[++n] = w } while (w != v)
        if (n > 1) {
          ncirc++
          line = ""
          for (i = n; i >= 1; i--) line = line (line == "" ? "" : " ") comp[i]
          print "circle " ncirc ": " line
          for (i = 1; i <= n; i++) member[comp[i]] = ncirc
          for (i = 1; i <= n; i++)
            for (k = 1; k <= nout[comp[i]]; k++)
              if (member[adj[comp[i], k]] == ncirc) print "  " comp[i] " -> " adj[comp[i], k] ": " names[comp[i], adj[comp[i], k]]
        }
      }
    }
    END { for (v in node) if (!(v in idx)) visit(v) }' "$tmp.edges")
  if [ -n "$out" ]; then
    echo "$(basename "$lib"): its files call each other in a circle:"
    echo "$out"
    status=1
  else
    echo "$(basename "$lib"): $(wc -l < "$tmp.edges") calls between $(cut -d' ' -f1,2 "$tmp.edges" | tr ' ' '\n' | sort -u | wc -l) files, no circle"
  fi
done
exit $status
