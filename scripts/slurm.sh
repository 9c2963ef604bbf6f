#!/usr/bin/env bash
# A one-node Slurm cluster on localhost for the distributed-run tests (Debian's Slurm 22.05,
# munge, no cgroups), kept in a folder of its own:
#
#   scripts/slurm.sh install        # apt-get install slurmd slurmctld slurm-client munge (idempotent)
#   scripts/slurm.sh start DIR      # install if needed, start munged, slurmctld, slurmd; wait for the node
#   scripts/slurm.sh stop DIR       # stop the daemons started for DIR, by their pid files
#
# `start` writes DIR/slurm.conf; point srun at it with SLURM_CONF=DIR/slurm.conf. It exits
# non-zero with a message on stderr when Slurm cannot be installed or started.
set -euo pipefail

APT_PACKAGES=(slurmd slurmctld slurm-client munge)

log() { echo "[slurm] $*" >&2; }

as_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

install() {
    local missing=()
    for package in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        log "present: ${APT_PACKAGES[*]}"
        return
    fi
    log "installing ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

start_munge() {
    if munge -n 2>/dev/null | unmunge 2>/dev/null | grep -q "STATUS: *Success"; then
        return
    fi
    as_root mkdir -p /etc/munge /run/munge /var/log/munge /var/lib/munge
    if ! as_root test -s /etc/munge/munge.key; then
        as_root dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
        as_root chmod 400 /etc/munge/munge.key
    fi
    as_root chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge
    as_root su -s /bin/sh munge -c /usr/sbin/munged
    munge -n | unmunge | grep -q "STATUS: *Success" || { log "munged does not answer"; exit 1; }
}

write_conf() {
    local dir=$1 host
    host=$(hostname -s)
    mkdir -p "$dir/state" "$dir/spool"
    cat >"$dir/slurm.conf" <<CONF
ClusterName=aiperftest
SlurmctldHost=$host
SlurmUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
}

start() {
    local dir
    dir=$(realpath -m "$1")
    install
    start_munge
    write_conf "$dir"
    export SLURM_CONF="$dir/slurm.conf"
    as_root env SLURM_CONF="$SLURM_CONF" slurmctld
    as_root env SLURM_CONF="$SLURM_CONF" slurmd
    for _ in $(seq 1 60); do
        if sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
            log "one-node cluster up (SLURM_CONF=$SLURM_CONF)"
            return
        fi
        sleep 0.5
    done
    log "the node did not come up: $(sinfo 2>&1 | tail -n 2)"
    tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
    stop "$dir"
    exit 1
}

stop() {
    local dir pid
    dir=$(realpath -m "$1")
    for daemon in slurmd slurmctld; do
        if [[ -s "$dir/$daemon.pid" ]]; then
            pid=$(cat "$dir/$daemon.pid")
            as_root kill "$pid" 2>/dev/null || true
        fi
    done
}

case "${1:-}" in
    install) install ;;
    start) start "${2:?start needs a folder}" ;;
    stop) stop "${2:?stop needs a folder}" ;;
    *) echo "usage: $0 install | start DIR | stop DIR" >&2; exit 2 ;;
esac
