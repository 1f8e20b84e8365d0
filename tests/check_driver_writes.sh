#!/bin/sh
# check_driver_writes.sh: fails when a driver (simulator, daemon, CLI, report) assigns a field of the
# engine, and when anything outside src/core touches its private fields: drivers change the engine only through its events and setters (include/deepshare/engine.h).
src="${1:?usage: check_driver_writes.sh SOURCE_DIR}"
hits=$(grep -nE '(^|[^a-zA-Z0-9_>.])(e|eng|engine|d->e|s->e|s\.e)->[a-z_]+(\[[^]]*\])*(\.[a-z_]+)*[[:space:]]*([-+*/|&]?=[^=]|\+\+|--)' \
       "$src"/src/sim/*.c "$src"/src/daemon/*.c "$src"/src/cli/*.c "$src"/src/report/*.c)
if [ -n "$hits" ]; then
  echo "drivers write engine fields (use the engine's events and setters):"
  echo "$hits"
  exit 1
fi
# the engine's private fields are for src/core alone
priv=$(grep -rnE '(->|\.)priv\.' "$src"/src "$src"/tests "$src"/bench --include='*.c' --include='*.h' | grep -v "/src/core/")
if [ -n "$priv" ]; then
  echo "engine-private fields used outside src/core:"
  echo "$priv"
  exit 1
fi
echo "no driver writes an engine field; no private field is used outside src/core"
