#!/bin/sh
# mkman.sh: writes the man pages from the programs' own --help texts and the sample config at build time,
# so that the pages cannot drift from the code.
# usage: mkman.sh cli BIN VERSION OUT                 deepshare(1): 'BIN --help' and every command's --help
#        mkman.sh daemon BIN VERSION EXTRA OUT        deepshared(8): 'BIN --help', then the roff file EXTRA
#        mkman.sh conf SAMPLE VERSION EXTRA OUT       deepshared.conf(5): the sample config, then EXTRA
set -eu
# A sanitizer build's leak report at exit must not fail the build of its man pages.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

# Plain text to roff: backslashes, minus signs, and lines that would read as requests.
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

# A --help text: the 'usage:' line and its indented continuations as SYNOPSIS text, the rest verbatim.
usage_part() { awk 'NR == 1 || (u && /^ /) { u = 1; print; next } { exit }' | sed 's/^usage: //' | esc; }
body_part() { awk 'NR == 1 || (u && /^ /) { u = 1; next } { u = 0; print }' | sed '1{/^$/d}' | esc; }

mode=$1
shift
case $mode in
cli)
  bin=$1 ver=$2 out=$3
  help=$("$bin" --help)
  {
    printf '.TH DEEPSHARE 1 "" "deepshare %s" "User Commands"\n.ad l\n.nh\n' "$ver"
    printf '.SH NAME\ndeepshare \\- QAD\\-driven scheduler and simulator for multi\\-tenant GPU clusters\n'
    printf '.SH SYNOPSIS\n.nf\n'; printf '%s\n' "$help" | usage_part; printf '.fi\n'
    printf '.SH DESCRIPTION\n.nf\n'; printf '%s\n' "$help" | body_part; printf '.fi\n'
    printf '.SH COMMANDS\n'
    for c in $(printf '%s\n' "$help" | awk '/^commands:/ { c = 1; next } c && /^$/ { exit } c { print $1 }'); do
      h=$("$bin" "$c" --help)
      printf '.SS %s\n.nf\n' "$c"
      printf '%s\n' "$h" | esc
      printf '.fi\n'
    done
    printf '.SH SEE ALSO\n.BR deepshared (8),\n.BR deepshared.conf (5)\n'
  } > "$out"
  ;;
daemon)
  bin=$1 ver=$2 extra=$3 out=$4
  help=$("$bin" --help)
  {
    printf '.TH DEEPSHARED 8 "" "deepshare %s" "System Administration"\n.ad l\n.nh\n' "$ver"
    printf '.SH NAME\ndeepshared \\- Slurm controller daemon that schedules with a deepshare policy\n'
    printf '.SH SYNOPSIS\n.nf\n'; printf '%s\n' "$help" | usage_part; printf '.fi\n'
    printf '.SH DESCRIPTION\n.nf\n'; printf '%s\n' "$help" | body_part; printf '.fi\n'
    cat "$extra"
  } > "$out"
  ;;
conf)
  sample=$1 ver=$2 extra=$3 out=$4
  {
    printf '.TH DEEPSHARED.CONF 5 "" "deepshare %s" "File Formats"\n.ad l\n.nh\n' "$ver"
    printf '.SH NAME\ndeepshared.conf \\- configuration of deepshared\n'
    printf '.SH SYNOPSIS\n/etc/deepshare/deepshared.conf\n'
    printf '.SH DESCRIPTION\n'
    # The sample's comments become paragraphs, "# ---- topic" lines sections, and its settings (also the
    # commented-out ones) indented example lines showing the defaults.
    awk '
      function flush() { if (para != "") { print ".PP"; print para; para = "" } }
      /^# ---- / { flush(); sub(/^# ---- /, ""); print ".SS \"" toupper(substr($0, 1, 1)) substr($0, 2) "\""; next }
      /^# [a-z_.-]+ = [^ ]*$/ || /^[a-z_.-]+ *=/ || /^tenant / {
        flush(); sub(/^# /, ""); print ".RS\n.nf\n.B " $0 "\n.fi\n.RE"; next }
      /^#/ { sub(/^# ?/, ""); para = para (para == "" ? "" : "\n") $0; next }
      /^$/ { flush(); next }
      END { flush() }' "$sample" | sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^'/\\\\\\&'/"
    cat "$extra"
  } > "$out"
  ;;
*)
  echo "usage: mkman.sh cli|daemon|conf ..." >&2
  exit 2
  ;;
esac
