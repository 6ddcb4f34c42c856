#!/usr/bin/env bash
# Stops the cluster slurm-up.sh started: only the processes named in its pid files (and munged
# only if slurm-up started it), then waits up to 5 s for them to exit.
SLURM_DIR=${SLURM_DIR:-/tmp/slurm-ci}
pidfiles=("$SLURM_DIR"/slurmd.pid "$SLURM_DIR"/slurmd-*.pid "$SLURM_DIR/slurmctld.pid")
[ -e "$SLURM_DIR/munged.ours" ] && pidfiles+=(/run/munge/munged.pid)
for f in "${pidfiles[@]}"; do
  if [ -s "$f" ]; then kill "$(cat "$f")" 2>/dev/null || true; fi
done
for _ in $(seq 50); do
  alive=0
  for f in "${pidfiles[@]}"; do
    [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1
  done
  [ $alive = 0 ] && break; sleep 0.1
done
rm -f "$SLURM_DIR/munged.ours"
exit 0
