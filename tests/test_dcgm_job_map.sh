#!/usr/bin/env bash
# test_dcgm_job_map.sh: deploy/dcgm-exporter/job-map.sh, the Prolog/Epilog that keeps dcgm-exporter's HPC
# job mapping (one file per GPU index, one Slurm job id a line), against a stand-in scontrol: GPUs from
# SLURM_JOB_GPUS and from `scontrol show job -d` (shard jobs), two jobs on one GPU, removal, idempotence,
# names dcgm-exporter would read, and exit 0 on bad input (a failing Prolog would drain the node).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
map=$here/deploy/dcgm-exporter/job-map.sh
W=$(mktemp -d /tmp/ds-jobmap.XXXXXX)
trap 'rm -rf "$W"' EXIT
fails=0
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1 ($2)"; fails=$((fails + 1)); fi; }
content() { [ -f "$W/map/$1" ] && paste -sd' ' "$W/map/$1" || echo none; }
mkdir -p "$W/bin"
# scontrol (as Slurm 22.05 prints a pinned shard job, seen on the local cluster): job 102 holds a shard of
# GPU 2 on n1; job 104 two GPUs on each of n[1-2]
cat > "$W/bin/scontrol" <<'EOS'
#!/bin/bash
if [ "$1 $2" = "show hostnames" ]; then case "$3" in "n[1-2]") printf 'n1\nn2\n' ;; *) echo "$3" ;; esac; exit 0; fi
case "$4" in
  102) printf 'JobId=102 JobName=x\n   JOB_GRES=shard:1\n     Nodes=n1 CPU_IDs=0 Mem=500 GRES=shard:1(IDX:2)\n   MinCPUsNode=1\n' ;;
  104) printf 'JobId=104\n     Nodes=n0 CPU_IDs=0 Mem=1 GRES=gpu:g3:1(IDX:3)\n     Nodes=n[1-2] CPU_IDs=0-1 Mem=1 GRES=gpu:2(IDX:0-1)\n' ;;
  *) echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1 ;;
esac
EOS
chmod +x "$W/bin/scontrol"
export PATH="$W/bin:$PATH" DCGM_HPC_JOB_MAPPING_DIR="$W/map" SLURMD_NODENAME=n1
unset SLURM_JOB_GPUS SLURM_JOB_ID SLURM_SCRIPT_CONTEXT

SLURM_SCRIPT_CONTEXT=prolog_slurmd SLURM_JOB_ID=101 SLURM_JOB_GPUS=0,2 bash "$map"; rc=$?
check "prolog: job 101 mapped to GPUs 0 and 2 (SLURM_JOB_GPUS)" '[ $rc = 0 ] && [ "$(content 0)" = 101 ] && [ "$(content 2)" = 101 ]'
SLURM_SCRIPT_CONTEXT=prolog_slurmd SLURM_JOB_ID=102 bash "$map"
check "prolog: shard job 102 mapped from scontrol show job -d (IDX:2), beside 101" '[ "$(content 2)" = "101 102" ]'
SLURM_SCRIPT_CONTEXT=prolog_slurmd SLURM_JOB_ID=102 bash "$map"
check "prolog twice: no duplicate line" '[ "$(content 2)" = "101 102" ]'
SLURM_SCRIPT_CONTEXT=prolog_slurmd SLURM_JOB_ID=103 SLURM_JOB_GPUS=1-3 bash "$map"
check "a range of indices (1-3)" '[ "$(content 1)" = 103 ] && [ "$(content 2)" = "101 102 103" ] && [ "$(content 3)" = 103 ]'
SLURM_SCRIPT_CONTEXT=prolog_slurmd SLURM_JOB_ID=104 bash "$map"
check "a node range line (n[1-2]) names this node; another node's line (n0, IDX:3) does not count" \
  '[ "$(content 0)" = "101 104" ] && [ "$(content 1)" = "103 104" ] && [ "$(content 3)" = 103 ]'
SLURM_SCRIPT_CONTEXT=epilog_slurmd SLURM_JOB_ID=101 bash "$map"; rc=$?
check "epilog: job 101 removed from every file, others kept" \
  '[ $rc = 0 ] && [ "$(content 0)" = 104 ] && [ "$(content 2)" = "102 103" ]'
bash "$map" remove 104; bash "$map" remove 103
check "a file left empty is removed (the GPU maps to no job)" '[ ! -e "$W/map/0" ] && [ ! -e "$W/map/1" ] && [ "$(content 2)" = 102 ]'
check "only names dcgm-exporter reads (^[0-9]+(.[0-9]+)?\$) and its lock are left" \
  '[ -z "$(ls -A "$W/map" | grep -Ev "^([0-9]+(\.[0-9]+)?|\.lock)\$")" ]'
SLURM_SCRIPT_CONTEXT=prolog_slurmd SLURM_JOB_ID=999 bash "$map"; rc=$?
check "a job scontrol does not know: logged, exit 0, nothing written" '[ $rc = 0 ] && [ "$(ls "$W/map")" = 2 ]'
bash "$map" add 12x 0; rc1=$?; bash "$map" frob 1 0; rc2=$?; bash "$map" add 105 0,a; rc3=$?
check "bad job id, bad operation, bad index: exit 0, nothing mapped" \
  '[ $rc1$rc2$rc3 = 000 ] && [ "$(content 0)" = 105 ] && ! grep -q 12x "$W"/map/* && ! [ -e "$W/map/a" ]'
echo "test_dcgm_job_map: $fails failed"
[ $fails = 0 ]
