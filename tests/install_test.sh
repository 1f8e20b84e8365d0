#!/usr/bin/env bash
# install_test.sh: 'cmake --install' into a DESTDIR puts exactly the expected files in FHS places, and
# the generated man pages render without groff or man warnings and document every config key.
# usage: install_test.sh BUILD_DIR PREFIX SYSCONFDIR HAVE_DAEMON(0|1) SOURCE_DIR
set -uo pipefail
build=$1 prefix=$2 etc=$3 daemon=$4 src=$5
d=$(mktemp -d /tmp/ds-install.XXXXXX)
trap 'rm -rf "$d"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

DESTDIR=$d cmake --install "$build" > "$d.log" 2>&1 || { cat "$d.log" >&2; rm -f "$d.log"; echo "FAIL: cmake --install" >&2; exit 1; }
rm -f "$d.log"

want=("$prefix/bin/deepshare" "$prefix/share/man/man1/deepshare.1")
for f in speeds.csv pairs.csv LICENSE README.md; do want+=("$prefix/share/deepshare/gavel/$f"); done
if [ "$daemon" = 1 ]; then
  want+=("$prefix/sbin/deepshared" "$prefix/share/man/man8/deepshared.8" "$prefix/share/man/man5/deepshared.conf.5"
         "$etc/deepshare/deepshared.conf" "$prefix/lib/systemd/system/deepshared.service"
         "$prefix/share/doc/deepshare/examples/deepshare.rules.yml"
         "$prefix/share/doc/deepshare/examples/prometheus.yml"
         "$prefix/share/doc/deepshare/examples/dcgm-exporter/counters.csv"
         "$prefix/share/doc/deepshare/examples/dcgm-exporter/job-map.sh")
fi
got=$(cd "$d" && find . -type f | sed 's|^\.||' | sort)
exp=$(printf '%s\n' "${want[@]}" | sort)
if [ "$got" = "$exp" ]; then echo "ok: installed files: $(echo "$got" | tr '\n' ' ')"
else bad "installed files differ (< expected, > installed):"; diff <(echo "$exp") <(echo "$got") >&2; fi
[ -x "$d$prefix/bin/deepshare" ] || bad "deepshare not executable"
[ "$daemon" = 1 ] && { [ -x "$d$prefix/sbin/deepshared" ] || bad "deepshared not executable"; }

# Every page renders with all groff warnings on, and through man(1) at 80 columns, without a message.
for page in $(cd "$d" && find . -path '*/man/man*' -type f); do
  f=$d/$page
  w=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$f" 2>&1)
  [ -z "$w" ] || bad "groff warns on $page: $w"
  if command -v man >/dev/null; then
    out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>"$d/man.err")
    [ -s "$d/man.err" ] && bad "man -l warns on $page: $(cat "$d/man.err")"
    # a here-string, not a pipe: with pipefail, grep -q leaving at the first match can kill echo (SIGPIPE)
    # on a page longer than the pipe buffer, and the check then fails with NAME present
    grep -q "^NAME" <<<"$out" || bad "man -l $page shows no NAME section"
  fi
  echo "ok: $page renders"
done

# The pages come from the code: every command of deepshare and every key deepshared reads is in them.
page1=$(LC_ALL=C.UTF-8 groff -man -Tutf8 "$d$prefix/share/man/man1/deepshare.1" 2>/dev/null | sed 's/.\x08//g')
for c in $("$build/deepshare" --help | awk '/^commands:/ { c = 1; next } c && /^$/ { exit } c { print $1 }'); do
  grep -q "deepshare $c" <<< "$page1" || bad "deepshare(1) lacks the command $c"
done
if [ "$daemon" = 1 ]; then
  page5=$(LC_ALL=C.UTF-8 groff -man -Tutf8 "$d$prefix/share/man/man5/deepshared.conf.5" 2>/dev/null | sed 's/.\x08//g')
  keys=$(grep -oE '(STR|NUM)\("[a-z_]+"|strcmp\(k, "[a-z_]+"\)' "$src/src/daemon/dconfig.c" | grep -oE '"[a-z_]+"' | tr -d '"')
  for k in $keys tenant; do
    grep -qE "(^|[^a-z_])$k( =|[^a-z_])" <<< "$page5" || bad "deepshared.conf(5) does not document the key $k"
  done
  echo "ok: deepshared.conf(5) documents $(echo $keys | wc -w) keys and tenant lines"
  grep -q "^ExecStart=$prefix/sbin/deepshared " "$d$prefix/lib/systemd/system/deepshared.service" \
    || bad "the installed unit does not start $prefix/sbin/deepshared"
fi
[ $fails = 0 ] || exit 1
echo "install test passed"
