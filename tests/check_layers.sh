#!/bin/sh
# check_layers.sh: what the compiler cannot see of the layering, read from the static libraries with nm:
# the engine (and the simulator) call no I/O or clock function, and the engine calls no function of a
# layer above it. Usage: check_layers.sh ENGINE.a BASE.a SIM.a
set -eu
engine="$1" base="$2" sim="$3"
# C library calls that open, read or write files, streams or the terminal, spawn programs, or read
# the clock. fprintf/fwrite stay allowed: config_help writes to the FILE its caller passes, ds_panic to
# stderr just before abort (the only user of stderr, in base).
io='fopen|fdopen|freopen|fclose|fread|fgets|fgetc|getc|getline|getdelim|fscanf|scanf|sscanf|printf|vprintf|puts|putchar|fputs|fputc|putc|fflush|open|openat|creat|read|write|close|pread|pwrite|opendir|readdir|mkdir|unlink|remove|rename|popen|system|stdin|stdout|stderr|time|clock|clock_gettime|gettimeofday|getenv'
status=0
for lib in "$engine" "$sim"; do
  bad=$(nm -u "$lib" | awk 'NF==2 {print $2}' | sed 's/@.*//' | grep -xE "$io" | sort -u || true)
  if [ -n "$bad" ]; then
    echo "$(basename "$lib") calls I/O or clock functions:" $bad
    status=1
  fi
done
# Calls out of the engine: every ds_ symbol it needs is defined in the engine or in base, with no
# exception (a policy's input tables reach it parsed, through the driver: deepshare/inputs.h).
nm --defined-only "$engine" "$base" | awk 'NF==3 {print $3}' | sort -u > "${TMPDIR:-/tmp}/layers_def.$$"
out=$(nm -u "$engine" | awk 'NF==2 {print $2}' | grep -E '^dsp?_' | sort -u |
      comm -23 - "${TMPDIR:-/tmp}/layers_def.$$" || true)
rm -f "${TMPDIR:-/tmp}/layers_def.$$"
if [ -n "$out" ]; then
  echo "the engine calls functions of higher layers:" $out
  status=1
fi
[ $status -eq 0 ] && echo "engine and simulator: no I/O or clock calls; engine calls nothing above it"
exit $status
