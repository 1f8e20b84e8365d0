#!/usr/bin/env bash
# install.sh: installs the Debian packages of the local Slurm test cluster (slurmctld, slurmd, client,
# munge, libslurm-dev) and libmicrohttpd-dev for deepshared, without letting the packages' postinst
# start daemons with the distribution's configuration (start.sh starts them with ours). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/deps.sh --with-slurm
