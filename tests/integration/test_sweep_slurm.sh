#!/usr/bin/env bash
# Slurm: on a throwaway single-node cluster (munge, slurmctld, slurmd from Debian, started here
# and stopped on exit), the demo sweep submitted with sbatch (slurm/commsweep.sbatch, 2 tasks,
# srun --mpi=pmix) completes and its file equals an mpirun run's, bit for bit but wall time.
# Runs only when CS_SLURM_TEST=1 (as root with slurm-wlm and munge installed; scripts/test sets
# it); otherwise it reports itself skipped.
set -euo pipefail
if [ "${CS_SLURM_TEST:-0}" != 1 ]; then
  echo "test_sweep_slurm: skipped (CS_SLURM_TEST=1 enables it: root, slurm-wlm and munge needed)"
  exit 77 # ctest SKIP_RETURN_CODE
fi
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"
CI=$CS_SOURCE_DIR/slurm/ci
export SLURM_DIR=$CS_WORK/slurm-ci SLURM_CONF=$CS_WORK/slurm-ci/slurm.conf
trap '"$CI/slurm-down.sh"' EXIT
timeout 120 "$CI/slurm-up.sh"

timeout 300 mpirun -np 2 "$CS_BIN" sweep "$DEMO" --out mpirun.h5 --quiet

export COMMSWEEP=$CS_BIN
timeout 300 "$CI/sbatch-wait.sh" --nodes=1 --ntasks=2 --ntasks-per-node=2 --time=00:05:00 \
  --output="$CS_WORK/slurm-%j.out" --error="$CS_WORK/slurm-%j.err" \
  "$CS_SOURCE_DIR/slurm/commsweep.sbatch" "$DEMO" "$CS_WORK/slurm.h5" | tee wait.txt
cat "$CS_WORK"/slurm-*.out
grep -q "state=COMPLETED exit=0:0" wait.txt
grep -q "ran 144 (0 failed) on 2 ranks" "$CS_WORK"/slurm-*.out
$PY "$HERE/sweep_compare.py" mpirun.h5 slurm.h5
echo "test_sweep_slurm: OK"
