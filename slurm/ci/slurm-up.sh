#!/usr/bin/env bash
# Starts a throwaway single-node Slurm cluster (munged + slurmctld + slurmd) as root, without
# systemd, everything but munge under $SLURM_DIR (recipe: ../shared/infra-notes.md §5).
# Needs: apt-get install -y --no-install-recommends slurm-wlm munge.  Stop it with slurm-down.sh
# (same SLURM_DIR).  Only one such cluster can run per machine (fixed ports 6817/6818).
set -euo pipefail
SLURM_DIR=${SLURM_DIR:-/tmp/slurm-ci}
SLURM_CPUS=${SLURM_CPUS:-$(nproc)}
MEM_MB=$(awk '/MemTotal/ {print int($2/1024*0.8)}' /proc/meminfo)
export SLURM_CONF=$SLURM_DIR/slurm.conf
[ "$(id -u)" = 0 ] || { echo "slurm-up: must run as root" >&2; exit 1; }
# (exited daemons linger as zombies until reaped: those do not count)
if ps -eo stat=,comm= | awk '$1 !~ /^Z/ && ($2 == "slurmctld" || $2 == "slurmd") {found=1} END {exit !found}'; then
  echo "slurm-up: a slurmctld or slurmd is already running on this machine" >&2; exit 1
fi
mkdir -p "$SLURM_DIR"/{state,spool,log}
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
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
InactiveLimit=0
KillWait=5
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$SLURM_CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=60 State=UP
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
slurmd -f "$SLURM_CONF" -N localhost                  # -N: node name independent of hostname
for _ in $(seq 120); do
  [ "$(sinfo -h -n localhost -o %t 2>/dev/null)" = idle ] && break; sleep 0.5
done
sinfo
[ "$(sinfo -h -n localhost -o %t)" = idle ] || { tail -20 "$SLURM_DIR"/log/*.log; exit 1; }
