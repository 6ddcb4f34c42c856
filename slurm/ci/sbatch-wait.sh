#!/usr/bin/env bash
# sbatch-wait.sh [sbatch args...] SCRIPT [script args...]: submits, polls every 0.5 s, prints the
# final state, and exits 0 only if the job COMPLETED.  Wrap it in `timeout`.
set -euo pipefail
id=$(sbatch --parsable "$@")
id=${id%%;*}
st=PENDING
for _ in $(seq 2400); do
  st=$(scontrol show job -o "$id" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
  case $st in PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED) sleep 0.5 ;; *) break ;; esac
done
info=$(scontrol show job -o "$id")
ec=$(grep -o ' ExitCode=[0-9]*:[0-9]*' <<<"$info" | cut -d= -f2)
reason=$(grep -o ' Reason=[^ ]*' <<<"$info" | cut -d= -f2)
echo "job $id state=$st exit=$ec reason=$reason"
[ "$st" = COMPLETED ]
