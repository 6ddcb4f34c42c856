# shellcheck shell=bash disable=SC2034  # PY, DEMO and HERE are for the sourcing scripts
# Sourced by the test_sweep*.sh scripts: the environment for mpirun on this kind of machine
# (root, oversubscribed, shared memory only; see ../shared/infra-notes.md §3), and for ASan
# builds the LeakSanitizer suppressions of Open MPI's own start-up allocations.
: "${CS_BIN:?}" "${CS_SOURCE_DIR:?}" "${CS_WORK:?}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
HERE=$CS_SOURCE_DIR/tests/integration
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$HERE/lsan-mpi.supp
# Open MPI's hwloc loads every hwloc plugin at MPI_Init and unloads them again; some (GL, OpenCL)
# pull in libraries with dynamic TLS, and after they are gone LeakSanitizer's exit-time scan of
# the main thread's TLS can read a stale entry and crash ("Tracer caught signal 11").  commsweep
# needs no plugin's topology: load none (an empty plugin directory).
mkdir -p "$CS_WORK.hwloc-plugins"
export HWLOC_PLUGINS_PATH=$CS_WORK.hwloc-plugins
PY=/usr/bin/python3
DEMO=$CS_SOURCE_DIR/sweeps/demo.json
rm -rf "$CS_WORK" && mkdir -p "$CS_WORK" && cd "$CS_WORK" || exit 1

# expect SUMMARY.txt PATTERN [FILE.h5]: the sweep summary matches, or show why (failed rows)
expect() {
  grep -q "$2" "$1" && return 0
  echo "expected /$2/ in $1:"; cat "$1"
  if [ -n "${3:-}" ]; then "$CS_BIN" show "$3" --status failed | tail -n +4 | head -5 | cut -c1-400; fi
  return 1
}
