#!/usr/bin/env bash
# Starts a throwaway Slurm cluster (munged + slurmctld + one slurmd per node) as root, without
# systemd, everything but munge under $SLURM_DIR (recipe: ../shared/infra-notes.md §5).
# SLURM_NODES=1 (default): one node, `localhost`.  SLURM_NODES=N: N nodes node1..nodeN, each its
# own slurmd on this host (Debian's Slurm allows it: per-node ports 17001.., spool, pid, log and
# TmpFS directories through %n), so an MPI job spans "nodes" that share every file system.
# Needs: apt-get install -y --no-install-recommends slurm-wlm munge.  Stop it with slurm-down.sh
# (same SLURM_DIR).  Only one such cluster can run per machine (fixed ports 6817/6818).
set -euo pipefail
SLURM_DIR=${SLURM_DIR:-/tmp/slurm-ci}
SLURM_CPUS=${SLURM_CPUS:-$(nproc)}   # per node
SLURM_NODES=${SLURM_NODES:-1}
MEM_MB=$(awk '/MemTotal/ {print int($2/1024*0.8)}' /proc/meminfo)
export SLURM_CONF=$SLURM_DIR/slurm.conf
[ "$(id -u)" = 0 ] || { echo "slurm-up: must run as root" >&2; exit 1; }
# (exited daemons linger as zombies until reaped: those do not count)
if ps -eo stat=,comm= | awk '$1 !~ /^Z/ && ($2 == "slurmctld" || $2 == "slurmd") {found=1} END {exit !found}'; then
  echo "slurm-up: a slurmctld or slurmd is already running on this machine" >&2; exit 1
fi
mkdir -p "$SLURM_DIR"/{state,spool,log}
if [ "$SLURM_NODES" = 1 ]; then
  nodes=localhost
  node_lines="NodeName=localhost NodeAddr=127.0.0.1 CPUs=$SLURM_CPUS RealMemory=$MEM_MB State=UNKNOWN"
  per_node="SlurmdSpoolDir=$SLURM_DIR/spool
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmdLogFile=$SLURM_DIR/log/slurmd.log"
else
  # several slurmd on one host: each its own port, and %n (the node name) in every per-node
  # path; TmpFS too, where the PMIx plugin makes its per-step directory (two steps of one job
  # on one host would otherwise collide on /tmp/spmix_appdir_<uid>_<job>.<step>)
  nodes="node[1-$SLURM_NODES]"
  node_lines=""
  for i in $(seq "$SLURM_NODES"); do
    node_lines+="NodeName=node$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((17000 + i)) CPUs=$SLURM_CPUS RealMemory=$((MEM_MB / SLURM_NODES)) State=UNKNOWN
"
    mkdir -p "$SLURM_DIR/spool/node$i" "$SLURM_DIR/tmp/node$i"
  done
  per_node="SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmdPidFile=$SLURM_DIR/slurmd-%n.pid
SlurmdLogFile=$SLURM_DIR/log/slurmd-%n.log
TmpFS=$SLURM_DIR/tmp/%n"
fi
cat > "$SLURM_CONF" <<CONF
ClusterName=ci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
EnforcePartLimits=ALL
MailProg=/bin/true
StateSaveLocation=$SLURM_DIR/state
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
$per_node
SlurmctldDebug=info
SlurmdDebug=info
InactiveLimit=0
KillWait=5
MinJobAge=600
$node_lines
PartitionName=debug Nodes=$nodes Default=YES MaxTime=60 State=UP
CONF

# munge: Debian's postinst writes /etc/munge/munge.key; create it if absent.
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key; chmod 600 /etc/munge/munge.key
fi
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged --force      # daemonizes; pid in /run/munge/munged.pid
  touch "$SLURM_DIR/munged.ours"                      # slurm-down stops only a munged we started
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi
munge -n | unmunge >/dev/null

slurmctld -f "$SLURM_CONF" -c                         # -c: clean state; daemonizes
if [ "$SLURM_NODES" = 1 ]; then
  slurmd -f "$SLURM_CONF" -N localhost                # -N: node name independent of hostname
else
  for i in $(seq "$SLURM_NODES"); do slurmd -f "$SLURM_CONF" -N "node$i"; done
fi
idle() { [ "$(sinfo -h -o %t 2>/dev/null | sort -u)" = idle ] && [ "$(sinfo -h -N -o %N 2>/dev/null | sort -u | wc -l)" = "$SLURM_NODES" ]; }
for _ in $(seq 120); do
  idle && break; sleep 0.5
done
sinfo
idle || { tail -20 "$SLURM_DIR"/log/*.log; exit 1; }
