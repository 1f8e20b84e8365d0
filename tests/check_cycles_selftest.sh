#!/bin/sh
# check_cycles_selftest.sh: check_cycles.sh fails on a library whose files call each other in a circle (and
# names the circle and its calls), and passes once the back-call is gone. Usage: check_cycles_selftest.sh CC
set -eu
cc=$1
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d "${TMPDIR:-/tmp}/cycles_selftest.XXXXXX")
trap 'rm -rf "$d"' EXIT
printf 'int top(void);\nint bottom(void) { return 1; }\nint back(void) { return top(); }\n' > "$d/bottom.c"
printf 'int bottom(void);\nint top(void) { return bottom(); }\n' > "$d/top.c"
printf 'int bottom(void) { return 1; }\n' > "$d/fixed.c"
(cd "$d" && $cc -c bottom.c top.c fixed.c && ar rcs circle.a bottom.o top.o && ar rcs fine.a fixed.o top.o)
if out=$(sh "$here/check_cycles.sh" "$d/circle.a"); then
  echo "FAIL: a back-call went unseen: $out"
  exit 1
fi
echo "$out" | grep -q "circle 1: " && echo "$out" | grep -q "bottom.o -> top.o: top" &&
  echo "$out" | grep -q "top.o -> bottom.o: bottom" || { echo "FAIL: the circle is not named: $out"; exit 1; }
sh "$here/check_cycles.sh" "$d/fine.a" >/dev/null || { echo "FAIL: a library without a circle is refused"; exit 1; }
echo "ok: a back-call is caught and named; without it the library passes"
echo "$out"
