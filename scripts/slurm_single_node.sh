#!/usr/bin/env bash
# Configures and starts a single-node Slurm on this machine (Debian 12's slurmctld, slurmd and
# munge, no systemd needed), for `kforge experiment --executor slurm` tests and trials. Run as
# root; idempotent: an already answering controller is left as it is. CPU-only, no
# accounting database (sacct then says little; kforge does not need it).
#   scripts/slurm_single_node.sh [start|stop]
set -euo pipefail
action="${1:-start}"
if [ "$action" = stop ]; then
  pkill -x slurmd || true; pkill -x slurmctld || true; pkill -x munged || true
  exit 0
fi
if [ "$(id -u)" != 0 ]; then echo "slurm_single_node.sh: needs root (it starts slurmd)" >&2; exit 2; fi
for b in slurmctld slurmd munged sbatch; do
  command -v "$b" >/dev/null || { echo "slurm_single_node.sh: $b is missing; apt-get install slurmctld slurmd slurm-client munge" >&2; exit 2; }
done
if sinfo -h >/dev/null 2>&1 && [ -n "$(sinfo -h -o %t 2>/dev/null | grep -E 'idle|mix|alloc')" ]; then exit 0; fi
host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512 ))
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge /var/lib/munge /var/log/munge
id slurm >/dev/null 2>&1 && chown slurm: /var/spool/slurmctld /var/log/slurm
cat >/etc/slurm/slurm.conf <<CONF
# Written by kforge's scripts/slurm_single_node.sh: one node, CPU only.
ClusterName=kforge
SlurmctldHost=$host
SlurmUser=$(id slurm >/dev/null 2>&1 && echo slurm || echo root)
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
if id munge >/dev/null 2>&1; then
  chown -R munge: /etc/munge /run/munge /var/lib/munge /var/log/munge
  chmod 0700 /etc/munge && chmod 0400 /etc/munge/munge.key
  pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged
else
  pgrep -x munged >/dev/null || /usr/sbin/munged --force
fi
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 60); do
  if [ -n "$(sinfo -h -o %t 2>/dev/null | grep -E 'idle|mix|alloc')" ]; then
    echo "slurm: single node $host up ($cpus CPUs)"; exit 0
  fi
  sleep 1
done
echo "slurm_single_node.sh: the node did not come up; see /var/log/slurm/" >&2
sinfo >&2 || true
tail -20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
