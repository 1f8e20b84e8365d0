#!/usr/bin/env bash
# deps.sh: installs the Debian packages deepshare builds and tests with; does nothing when present.
set -euo pipefail
# --with-slurm adds the e2e test's packages: Slurm (with liblua5.1-0 for its job_submit/lua plugin), munge,
# libmicrohttpd, libcurl (deepshared's Prometheus telemetry and leader lease), curl, prometheus, etcd-server
# (the lease store of tests/e2e_ha.sh), and chromium
# (headless: loads the status page, checks the console and writes the screenshot).
# file: cpack -G DEB runs it (dpkg-shlibdeps) to find the package's library dependencies.
# clang + libclang-rt-dev: libFuzzer and its sanitizer runtimes for tests/fuzz (recommends are not installed)
pkgs=(build-essential cmake pkg-config file libjansson-dev libcmocka-dev libxgboost-dev gnuplot-nox valgrind clang libclang-rt-dev)
slurm_pkgs=(slurmctld slurmd slurm-client munge liblua5.1-0 libmunge-dev libslurm-dev libmicrohttpd-dev libcurl4-openssl-dev curl prometheus chromium etcd-server)
case "${1:-}" in
  --with-slurm) pkgs+=("${slurm_pkgs[@]}") ;;
  # the accounting database of the native-Slurm comparison (deploy/slurm/accounting.sh)
  --with-accounting) pkgs+=("${slurm_pkgs[@]}" mariadb-server slurmdbd) ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "deepshare: installing Debian packages: ${missing[*]}" >&2
$SUDO apt-get update -qq
# Slurm's, MariaDB's and Prometheus's postinsts would start daemons with the distribution config; our scripts
# start them instead.
if [[ " ${missing[*]} " == *" slurm"* || " ${missing[*]} " == *" prometheus "* || " ${missing[*]} " == *" mariadb-server "* ||
      " ${missing[*]} " == *" etcd-server "* ]] &&
   [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
