#!/bin/bash
# job-map.sh: dcgm-exporter's HPC job mapping kept by Slurm (docs/deepshared.md, "Deploying dcgm-exporter's
# job mapping with Slurm"). As the compute nodes' Prolog (add) and Epilog (remove), it keeps one file per GPU
# index in DCGM_HPC_JOB_MAPPING_DIR (default /run/dcgm-job-map), holding the ids of the Slurm jobs on that
# GPU one a line: what `dcgm-exporter --hpc-job-mapping-dir DIR` reads to give each GPU's metrics an
# `hpc_job` label per job (two series for a GPU two shard jobs share). deepshared's Prometheus source reads
# that label (telemetry_job_label).
#
# Installed as /usr/share/doc/deepshare/examples/dcgm-exporter/job-map.sh; copy it to every GPU node and
# name it in slurm.conf (the same script both ways; or call it from your prolog.d / epilog.d):
#   Prolog=/etc/slurm/dcgm-job-map.sh
#   Epilog=/etc/slurm/dcgm-job-map.sh
# Slurm runs it as root with SLURM_SCRIPT_CONTEXT=prolog_slurmd or epilog_slurmd and SLURM_JOB_ID; the
# GPU indices are SLURM_JOB_GPUS where Slurm sets it (jobs with gpu GRES), otherwise (shard jobs) the
# IDX of this node's GRES in `scontrol show job -d` (deepshared pins each job to its GPU indices).
# By hand: job-map.sh add|remove JOBID [GPU_INDICES, e.g. 0,3]. Exits 0 whatever happens (a failing
# Prolog drains the node): a job it cannot map is logged (logger -t dcgm-job-map) and is just not measured.
#
# The indices must be dcgm-exporter's `gpu` label (the NVML index): true when gres.conf lists the GPUs
# in /dev/nvidiaN order or uses AutoDetect=nvml.
dir=${DCGM_HPC_JOB_MAPPING_DIR:-/run/dcgm-job-map}
node=${SLURMD_NODENAME:-$(hostname -s)}
log() { logger -t dcgm-job-map -- "$*" 2>/dev/null || echo "dcgm-job-map: $*" >&2; }

case "${1:-${SLURM_SCRIPT_CONTEXT:-}}" in
  add | prolog_slurmd) op=add ;;
  remove | epilog_slurmd) op=remove ;;
  *) log "usage: job-map.sh add|remove JOBID [GPU_INDICES] (or as Slurm's Prolog/Epilog)"; exit 0 ;;
esac
job=${2:-${SLURM_JOB_ID:-}}
idx=${3:-${SLURM_JOB_GPUS:-}}
case "$job" in '' | *[!0-9]*) log "no numeric job id ('$job')"; exit 0 ;; esac

if [ -z "$idx" ] && [ $op = add ]; then
  # "   Nodes=n1 CPU_IDs=0-1 Mem=100 GRES=shard:1(IDX:2)": the IDX of the lines naming this node (a line
  # may name several nodes, n[1-2], which scontrol show hostnames expands)
  while read -r nl gres; do
    [ -n "$gres" ] || continue
    if [ "$nl" = "$node" ] || scontrol show hostnames "$nl" 2>/dev/null | grep -qx "$node"; then
      idx="$idx,$(echo "$gres" | grep -o 'IDX:[0-9,-]*' | sed 's/IDX://' | paste -sd, -)"
    fi
  done < <(scontrol show job -d "$job" 2>/dev/null |
    awk '/^ *Nodes=/ { n = substr($1, 7); g = ""; for (i = 2; i <= NF; i++) if ($i ~ /^GRES=/) g = substr($i, 6); print n, g }')
fi

# "0,2-3" -> "0 2 3"
expand() {
  local IFS=, part out=""
  for part in $1; do
    case "$part" in
      *-*) for ((i = ${part%-*}; i <= ${part#*-}; i++)); do out="$out $i"; done ;;
      '') ;;
      *) out="$out $part" ;;
    esac
  done
  echo $out
}

mkdir -p "$dir" || { log "cannot create $dir"; exit 0; }
exec 9>"$dir/.lock" && flock -w 10 9 || log "no lock on $dir/.lock in 10 s: writing anyway"
# remove: from every file (the job's GPUs are no longer known once it ended; a requeued job may have
# moved); add: to each of its GPUs' files. Each file is rewritten whole and renamed into place, so
# dcgm-exporter never reads half a file; a file left empty is removed (the GPU maps to no job).
rewrite() { # FILE: stdin becomes its content
  local f=$1 tmp
  tmp=$(mktemp "$dir/.tmp.XXXXXX") || return 1
  cat > "$tmp"
  if [ -s "$tmp" ]; then chmod 644 "$tmp" && mv -f "$tmp" "$f"; else rm -f "$tmp" "$f"; fi
}
if [ $op = remove ]; then
  for f in "$dir"/*; do
    [ -f "$f" ] || continue
    case "${f##*/}" in *[!0-9.]* | '') continue ;; esac
    grep -qx "$job" "$f" && grep -vx "$job" "$f" | rewrite "$f"
  done
  exit 0
fi
gpus=$(expand "$idx")
[ -n "$gpus" ] || { log "job $job: no GPU indices on $node (SLURM_JOB_GPUS unset and none in scontrol show job -d): not mapped"; exit 0; }
for g in $gpus; do
  case "$g" in *[!0-9]*) log "job $job: GPU index '$g' is not a number: skipped"; continue ;; esac
  f="$dir/$g"
  { [ -f "$f" ] && grep -vx "$job" "$f"; echo "$job"; } | rewrite "$f"
done
exit 0
