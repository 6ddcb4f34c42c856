#!/usr/bin/env bash
# Slurm: on a throwaway cluster of two nodes (munge, slurmctld and two slurmd from Debian on this
# host, started here and stopped on exit), the demo sweep submitted with sbatch
# (slurm/commsweep.sbatch, srun --mpi=pmix) on one node with 2 tasks and on two nodes with one
# task each completes, and both files equal an mpirun run's, bit for bit but wall time.  With
# the output on a node-local path (a private tmpfs over its directory for the rank on node2),
# the sweep stops before any job runs, naming the rank and node that do not see the file.
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
SLURM_NODES=2 timeout 120 "$CI/slurm-up.sh"

timeout 300 mpirun -np 2 "$CS_BIN" sweep "$DEMO" --out mpirun.h5 --quiet

export COMMSWEEP=$CS_BIN
timeout 300 "$CI/sbatch-wait.sh" --nodes=1 --ntasks=2 --ntasks-per-node=2 --time=00:05:00 \
  --output="$CS_WORK/slurm-%j.out" --error="$CS_WORK/slurm-%j.err" \
  "$CS_SOURCE_DIR/slurm/commsweep.sbatch" "$DEMO" "$CS_WORK/slurm.h5" | tee wait.txt
cat "$CS_WORK"/slurm-*.out
grep -q "state=COMPLETED exit=0:0" wait.txt
grep -q "ran 144 (0 failed) on 2 ranks" "$CS_WORK"/slurm-*.out
$PY "$HERE/sweep_compare.py" mpirun.h5 slurm.h5

# two nodes, one task each: the ranks reach each other over TCP (loopback here)
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo
timeout 300 "$CI/sbatch-wait.sh" --nodes=2 --ntasks=2 --ntasks-per-node=1 --time=00:05:00 \
  --output="$CS_WORK/two-%j.out" --error="$CS_WORK/two-%j.err" \
  "$CS_SOURCE_DIR/slurm/commsweep.sbatch" "$DEMO" "$CS_WORK/two.h5" | tee wait2.txt
cat "$CS_WORK"/two-*.out
grep -q "state=COMPLETED exit=0:0" wait2.txt
job=$(sed -n 's/^job \([0-9]*\) .*/\1/p' wait2.txt)
scontrol show job "$job" | grep -q "NodeList=node\[1-2\]"
for n in 1 2; do  # each slurmd launched one task of the sweep's step
  grep -q "launch task StepId=$job.0 " "$SLURM_DIR/log/slurmd-node$n.log"
done
read -r demo_jobs _ < <($PY "$HERE/sweep_check.py" summary mpirun.h5) # every demo job, done
grep -q "ran $demo_jobs (0 failed) on 2 ranks" "$CS_WORK"/two-*.out
$PY "$HERE/sweep_compare.py" mpirun.h5 two.h5

# a node-local output path: the rank on node2 sees another (empty) directory there
mkdir -p "$CS_WORK/local"
cat > nodelocal.sh <<EOF
#!/bin/bash
if [ "\$SLURMD_NODENAME" = node2 ]; then
  exec unshare -m sh -c 'mount -t tmpfs none "\$0" && exec "\$@"' "$CS_WORK/local" "$CS_BIN" "\$@"
fi
exec "$CS_BIN" "\$@"
EOF
chmod +x nodelocal.sh
rc=0
COMMSWEEP=$PWD/nodelocal.sh timeout 300 "$CI/sbatch-wait.sh" --nodes=2 --ntasks=2 \
  --ntasks-per-node=1 --time=00:05:00 --output="$CS_WORK/local-%j.out" \
  --error="$CS_WORK/local-%j.err" "$CS_SOURCE_DIR/slurm/commsweep.sbatch" "$DEMO" \
  "$CS_WORK/local/out.h5" | tee wait3.txt || rc=$?
cat "$CS_WORK"/local-*.err
[ $rc != 0 ]
grep -q "rank 1 (node node2) does not see the file rank 0 (node node1) laid out .* shared by every node" \
  "$CS_WORK"/local-*.err
echo "test_sweep_slurm: OK"
