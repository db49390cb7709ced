#!/usr/bin/env bash
# A multi-host testbed on one Linux machine (root), for zmqperf's cross-host tests and by hand.
#
#   scripts/testbed.sh up DIR [--slurm] [--bin PATH] [--owner PID] [--ttl SECS]
#   scripts/testbed.sh down DIR
#   scripts/testbed.sh link-down|link-up DIR HOST      cut or restore HOST's link to the bridge
#   scripts/testbed.sh shape DIR HOST RATE             tbf: RATE (e.g. 100mbit) each way on HOST's link
#   scripts/testbed.sh loss DIR HOST PCT               nftables: drop PCT% (e.g. 2, 0.5) each way
#   scripts/testbed.sh unshape DIR HOST                remove the shaping and the loss
#
# Hosts a, b and c are network namespaces zpN-a/b/c (10.77.N.1-3/24) on a bridge in a fourth
# namespace zpN-sw (multicast flooded to every host, 239.0.0.0/8 routed by eth0 on each);
# nothing is added to the root namespace. N is claimed atomically (the first
# free `ip netns add zpN-sw`), so testbeds run side by side. b and c run sshd (ed25519 keys made
# in DIR). c is a host of its own beyond the network: its CLOCK_MONOTONIC is ahead by
# $ZP_C_MONOTONIC_OFFSET s (5000, a time namespace) and, in its mount namespace, tmpfs hide the
# zmqperf binary's folder and root's ~/.cache (it lacks the binary: for shipping tests; what is
# shipped there is gone with the testbed). Everything c runs enters those namespaces through an
# anchor process (`nsenter -t PID -n -m -T`, in hosts-netns.toml).
# --slurm adds a Slurm cluster: munged (its own key and socket in DIR) and slurmctld on a,
# slurmd zpNb on b and zpNc on c (cgroup v1 conf, CPUs=4 each so steps can share a node).
#
# up writes into DIR: hosts-netns.toml (exec), hosts-ssh.toml (ssh), hosts-srun.toml (srun,
# with --slurm), env (KEY=VALUE lines: names, addresses, ssh key, SLURM_CONF), every daemon's
# PID (pids/NAME.pid: "PID STARTTIME", so down never kills a recycled PID) and logs. The runner
# runs on a: `ip netns exec zpN-a zmqperf ...` (with SLURM_CONF from env for srun).
#
# Life: down kills by the recorded PIDs only (TERM, then KILL after 3 s), deletes the
# namespaces, works after an up that failed half-way, and is idempotent. A reaper started by up
# runs down when the owner process (--owner, default: up's caller) is gone, or after --ttl
# seconds (default 1800), so a test killed outright leaves nothing behind for long.
# No daemon keeps up's stdout or stderr (a caller reading a pipe would wait for ever): each
# one writes to its own log in DIR. ZP_TESTBED_FAIL_AT=claim|network|c|sshd|slurm makes up fail
# after that step (the tests check that down cleans up a half-built testbed).
#
# Munge is machine-global only by default (/run/munge, /etc/munge/munge.key): here each Slurm
# testbed runs its own munged with its own key and socket in DIR (AuthInfo=socket=... in its
# slurm.conf), Slurm's daemons listen inside the testbed's namespaces and keep their state in
# DIR (no cgroup is made: proctrack/linuxproc, task/none), so Slurm testbeds need no lock and
# run side by side (tests/testbed.rs runs two at once).
#
# Packages: iproute2, util-linux, openssh-server, nftables; with --slurm slurmctld slurmd
# slurm-client munge (.ci/run installs them).
set -euo pipefail

HOSTS=(a b c)
ZP_C_MONOTONIC_OFFSET=${ZP_C_MONOTONIC_OFFSET:-5000}
SELF=$(readlink -f "$0")

die() { echo "testbed: error: $*" >&2; exit 1; }
say() { echo "[$(date +%s.%N | cut -c1-14)] $*"; }

# starttime PID: the process's start time in clock ticks since boot (field 22 of stat).
starttime() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s
  echo "${20}"
}

# alive PID STARTTIME: the same process still runs (not a zombie, not a recycled PID).
alive() {
  local s state
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $1 $2 $s
  state=$3
  [ "$state" != Z ] && [ "$state" != X ] && [ "${22}" = "$2" ]
}

# record NAME PID: writes DIR/pids/NAME.pid as "PID STARTTIME".
record() {
  local st
  st=$(starttime "$2") || st=gone
  echo "$2 $st" >"$DIR/pids/$1.pid"
}

# wait_for SECS DESC CMD...: runs CMD every 0.05 s until it succeeds, at most SECS seconds.
wait_for() {
  local secs=$1 desc=$2 i
  shift 2
  for ((i = 0; i < secs * 20; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  die "$desc: not ready after $secs s"
}

# pidfile_pid FILE: the PID a daemon wrote to its own pid file.
pidfile_pid() { [ -s "$1" ] && head -1 "$1" | tr -dc 0-9; }

load_id() {
  [ -s "$DIR/id" ] || return 1
  N=$(cat "$DIR/id")
  P=zp$N
}

ns() { echo "$P-$1"; }
addr() {
  local i
  for i in "${!HOSTS[@]}"; do [ "${HOSTS[$i]}" = "$1" ] && echo "10.77.$N.$((i + 1))"; done
}
check_host() {
  case "$1" in a | b | c) ;; *) die "host '$1': the hosts are a, b and c" ;; esac
}

# ---------------------------------------------------------------------------------------------
up() {
  local slurm=0 bin="" owner=$PPID ttl=1800
  while [ $# -gt 0 ]; do
    case "$1" in
      --slurm) slurm=1 ;;
      --bin) bin=$2; shift ;;
      --owner) owner=$2; shift ;;
      --ttl) ttl=$2; shift ;;
      *) die "up: unknown option '$1' (--slurm, --bin PATH, --owner PID, --ttl SECS)" ;;
    esac
    shift
  done
  [ "$(id -u)" = 0 ] || die "up needs root (network namespaces, sshd, mounts)"
  bin=${bin:-${ZMQPERF_BIN:-$(dirname "$SELF")/../target/debug/zmqperf}}
  [ -x "$bin" ] || die "no zmqperf binary at '$bin' (build it, or pass --bin PATH)"
  bin=$(readlink -f "$bin")
  [ -e "$DIR/id" ] && die "$DIR already holds a testbed (id $(cat "$DIR/id")); run down first"
  local need=() t
  for t in ip unshare nsenter setsid sshd ssh ssh-keygen nft tc python3; do
    command -v "$t" >/dev/null || need+=("$t")
  done
  if [ $slurm = 1 ]; then
    for t in munged mungekey slurmctld slurmd srun sinfo; do command -v "$t" >/dev/null || need+=("$t"); done
  fi
  [ ${#need[@]} -eq 0 ] || die "missing: ${need[*]} (.ci/run installs openssh-server nftables iproute2 munge slurmctld slurmd slurm-client)"
  case "$DIR$bin" in *[[:space:]]*) die "DIR and the binary's path must not contain spaces" ;; esac
  mkdir -p "$DIR/pids"
  # shellcheck disable=SC2064
  trap "[ \$? = 0 ] || echo 'testbed: up failed; what it built stays for a look until its owner $owner exits: $SELF down $DIR' >&2" EXIT
  chmod 755 "$DIR" # munged wants every folder above its socket searchable by all
  local t0
  t0=$(date +%s.%N)

  say "claim an id"
  local base=$(($$ % 250)) k
  N=""
  for ((k = 0; k < 250; k++)); do
    local n=$(((base + k) % 250 + 1))
    if ip netns add "zp$n-sw" 2>/dev/null; then N=$n; break; fi
  done
  [ -n "$N" ] || die "no free testbed id: 250 namespaces zp*-sw exist (ip netns list; remove stale ones)"
  echo "$N" >"$DIR/id"
  P=zp$N
  say "id $N: namespaces $P-a $P-b $P-c $P-sw, subnet 10.77.$N.0/24"

  # The reaper: down when the owner is gone or the TTL is over (its own session: a Ctrl-C to
  # the caller's process group does not stop it).
  local owner_st
  owner_st=$(starttime "$owner") || die "--owner $owner: no such process"
  # shellcheck disable=SC2016
  setsid bash -c '
    owner=$1 owner_st=$2 ttl=$3 self=$4 dir=$5
    for ((i = 0; i < ttl * 2; i++)); do
      s=$(cat /proc/$owner/stat 2>/dev/null) || break
      s=${s##*) }; set -- $s; [ "$1" = Z ] && break; [ "${20}" = "$owner_st" ] || break
      [ -e "$dir/down.done" ] && exit 0
      sleep 0.5
    done
    echo "reaper: owner $owner gone or ttl ${ttl}s over: down"
    ZP_REAPING=1 "$self" down "$dir"
  ' reaper "$owner" "$owner_st" "$ttl" "$SELF" "$DIR" </dev/null >>"$DIR/reaper.log" 2>&1 &
  record reaper $!
  failpoint claim

  say "network"
  local sw
  sw=$(ns sw)
  ip -n "$sw" link set lo up
  # Without snooping the bridge floods multicast to every port, as a plain switch does.
  ip -n "$sw" link add br0 type bridge mcast_snooping 0
  ip -n "$sw" link set br0 up
  local h
  for h in "${HOSTS[@]}"; do
    ip netns add "$(ns "$h")"
    ip -n "$sw" link add "p-$h" type veth peer name eth0 netns "$(ns "$h")"
    ip -n "$sw" link set "p-$h" master br0 up
    ip -n "$(ns "$h")" addr add "$(addr "$h")/24" dev eth0
    ip -n "$(ns "$h")" link set eth0 up
    ip -n "$(ns "$h")" link set lo up
    # Multicast (epgm, norm, udp groups) leaves by the bridge.
    ip -n "$(ns "$h")" route add 239.0.0.0/8 dev eth0
  done
  failpoint network

  say "host c: its own monotonic clock (+${ZP_C_MONOTONIC_OFFSET} s) and mounts (no $(dirname "$bin"), empty ~/.cache)"
  mkdir -p /root/.cache
  # The anchor holds c's mount and time namespaces for the others to enter; it lives at most
  # the TTL. unshare --fork waits for it and ignores TERM: down kills both by their PIDs.
  # shellcheck disable=SC2016
  ip netns exec "$(ns c)" unshare --mount --propagation private --time --monotonic "$ZP_C_MONOTONIC_OFFSET" \
    --fork --kill-child sh -c 'mount -t tmpfs zp-hide "$1" && mount -t tmpfs zp-cache /root/.cache && exec sleep "$2"' \
    sh "$(dirname "$bin")" "$ttl" </dev/null >"$DIR/c-anchor.log" 2>&1 &
  local unshare_pid=$! anchor=""
  record c-unshare "$unshare_pid"
  c_anchor() { anchor=$(pgrep -P "$unshare_pid" -x sleep) && [ -n "$anchor" ]; }
  wait_for 5 "c's anchor (log: $DIR/c-anchor.log)" c_anchor
  anchor=$(pgrep -P "$unshare_pid" -x sleep)
  record c-anchor "$anchor"
  on_c=(nsenter --target "$anchor" --net --mount --time --)
  failpoint c

  say "sshd on b and c"
  mkdir -p /run/sshd
  ssh-keygen -q -t ed25519 -N '' -C "zmqperf testbed $P client" -f "$DIR/client_key"
  ssh-keygen -q -t ed25519 -N '' -C "zmqperf testbed $P host" -f "$DIR/host_key"
  cp "$DIR/client_key.pub" "$DIR/authorized_keys"
  chmod 600 "$DIR/authorized_keys"
  for h in b c; do
    printf '%s\n' "ListenAddress $(addr "$h"):22" "HostKey $DIR/host_key" "PidFile $DIR/sshd-$h.pidfile" \
      "AuthorizedKeysFile $DIR/authorized_keys" "PermitRootLogin prohibit-password" \
      "PasswordAuthentication no" "KbdInteractiveAuthentication no" "UsePAM no" "StrictModes no" \
      "ClientAliveInterval 2" "MaxStartups 100:30:200" "MaxSessions 100" >"$DIR/sshd-$h.conf"
  done
  ip netns exec "$(ns b)" /usr/sbin/sshd -D -f "$DIR/sshd-b.conf" -E "$DIR/sshd-b.log" </dev/null >"$DIR/sshd-b.out" 2>&1 &
  record sshd-b $!
  "${on_c[@]}" /usr/sbin/sshd -D -f "$DIR/sshd-c.conf" -E "$DIR/sshd-c.log" </dev/null >"$DIR/sshd-c.out" 2>&1 &
  record nsenter-sshd-c $!
  for h in b c; do
    wait_for 10 "sshd on $h (log: $DIR/sshd-$h.log)" test -s "$DIR/sshd-$h.pidfile"
    wait_for 10 "sshd on $h listening at $(addr "$h"):22" \
      ip netns exec "$(ns a)" timeout 1 bash -c "exec 3<>/dev/tcp/$(addr "$h")/22"
  done
  record sshd-c "$(pidfile_pid "$DIR/sshd-c.pidfile")"
  failpoint sshd

  if [ $slurm = 1 ]; then
    say "slurm: munged and slurmctld on a, slurmd $P""b on b and $P""c on c"
    mkdir -p "$DIR/state" "$DIR/munge"
    chmod 755 "$DIR/munge"
    mungekey --create --keyfile="$DIR/munge.key"
    ip netns exec "$(ns a)" munged -F --socket="$DIR/munge/munge.sock" --key-file="$DIR/munge.key" \
      --pid-file="$DIR/munged.pidfile" --seed-file="$DIR/munged.seed" --log-file="$DIR/munged.log" \
      </dev/null >"$DIR/munged.out" 2>&1 &
    record munged $!
    wait_for 10 "munged (log: $DIR/munged.out)" test -S "$DIR/munge/munge.sock"
    local hn
    hn=$(hostname)
    cat >"$DIR/slurm.conf" <<CONF
# zmqperf testbed $P (scripts/testbed.sh): slurmctld on a, slurmd on b and c, munged of its own.
ClusterName=$P
SlurmctldHost=$hn($(addr a))
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmdParameters=config_overrides
MailProg=/bin/true
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool-%n
SlurmctldPidFile=$DIR/slurmctld.pidfile
SlurmdPidFile=$DIR/slurmd-%n.pidfile
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd-%n.log
NodeName=${P}b NodeAddr=$(addr b) NodeHostname=$hn CPUs=4 State=UNKNOWN
NodeName=${P}c NodeAddr=$(addr c) NodeHostname=$hn CPUs=4 State=UNKNOWN
PartitionName=$P Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    # Hybrid cgroup v1/v2 layouts defeat Slurm's autodetection: slurmd would refuse to start.
    printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n' >"$DIR/cgroup.conf"
    export SLURM_CONF=$DIR/slurm.conf
    ip netns exec "$(ns a)" slurmctld -D -i -f "$SLURM_CONF" </dev/null >"$DIR/slurmctld.out" 2>&1 &
    record slurmctld $!
    ip netns exec "$(ns b)" slurmd -D -N "${P}b" -f "$SLURM_CONF" </dev/null >"$DIR/slurmd-b.out" 2>&1 &
    record slurmd-b $!
    "${on_c[@]}" slurmd -D -N "${P}c" -f "$SLURM_CONF" </dev/null >"$DIR/slurmd-c.out" 2>&1 &
    record nsenter-slurmd-c $!
    wait_for 10 "slurmd on c (log: $DIR/slurmd-${P}c.log)" test -s "$DIR/slurmd-${P}c.pidfile"
    record slurmd-c "$(pidfile_pid "$DIR/slurmd-${P}c.pidfile")"
    nodes_idle() { [ "$(ip netns exec "$(ns a)" sinfo -h -N -o '%T' 2>/dev/null | sort -u)" = idle ]; }
    wait_for 20 "Slurm nodes idle (logs: $DIR/slurmctld.log, $DIR/slurmd-*.log)" nodes_idle
    failpoint slurm
  fi

  say "hosts files and env"
  write_files "$bin" "$anchor" "$slurm"
  say "up in $(echo "$(date +%s.%N) $t0" | awk '{printf "%.2f", $1 - $2}') s: $DIR/hosts-*.toml, $DIR/env"
}

# failpoint NAME: fails up here when ZP_TESTBED_FAIL_AT=NAME (the tests check that down cleans
# up after a half-built testbed).
failpoint() { [ "${ZP_TESTBED_FAIL_AT:-}" != "$1" ] || die "failing at '$1' as ZP_TESTBED_FAIL_AT asks"; }

# toml_list WORD...: a TOML array of strings.
toml_list() {
  local out="" w
  for w in "$@"; do out+="${out:+, }\"$w\""; done
  echo "[$out]"
}

write_files() {
  local bin=$1 anchor=$2 slurm=$3 h key=$DIR/client_key
  local ssh_opts=(-i "$key" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR)
  local c_exec=(nsenter --target "$anchor" --net --mount --time --)
  local head
  head="# zmqperf testbed $P (scripts/testbed.sh up $DIR). The runner runs on a:
#   ip netns exec $P-a zmqperf run --hosts FILE ...
# c: CLOCK_MONOTONIC +$ZP_C_MONOTONIC_OFFSET s, and $(dirname "$bin") is empty there (ship)."
  host_a() { printf '[hosts.a]\nexec = %s\naddr = "%s"\nzmqperf = "%s"\n' "$(toml_list ip netns exec "$(ns a)")" "$(addr a)" "$bin"; }
  {
    echo "$head"
    echo "# Launcher: the hosts' namespaces (c's through its anchor process $anchor)."
    host_a
    printf '\n[hosts.b]\nexec = %s\naddr = "%s"\nzmqperf = "%s"\n' "$(toml_list ip netns exec "$(ns b)")" "$(addr b)" "$bin"
    printf '\n[hosts.c]\nexec = %s\naddr = "%s"\nship = true\n' "$(toml_list "${c_exec[@]}")" "$(addr c)"
  } >"$DIR/hosts-netns.toml"
  {
    echo "$head"
    echo "# Launcher: ssh from a to sshd on b and c (key $key)."
    host_a
    for h in b c; do
      printf '\n[hosts.%s]\nssh = "root@%s"\nssh_options = %s\naddr = "%s"\n' "$h" "$(addr "$h")" "$(toml_list "${ssh_opts[@]}")" "$(addr "$h")"
      if [ "$h" = b ]; then printf 'zmqperf = "%s"\n' "$bin"; else echo "ship = true"; fi
    done
  } >"$DIR/hosts-ssh.toml"
  if [ "$slurm" = 1 ]; then
    {
      echo "$head"
      echo "# Launcher: srun to the Slurm nodes ${P}b (on b) and ${P}c (on c); the runner needs"
      echo "# SLURM_CONF=$DIR/slurm.conf in its environment."
      host_a
      printf '\n[hosts.b]\nsrun = "%s"\naddr = "%s"\nzmqperf = "%s"\n' "${P}b" "$(addr b)" "$bin"
      printf '\n[hosts.c]\nsrun = "%s"\naddr = "%s"\nship = true\n' "${P}c" "$(addr c)"
    } >"$DIR/hosts-srun.toml"
  fi
  {
    echo "ZP_ID=$N"
    echo "ZP_PREFIX=$P"
    echo "ZP_SUBNET=10.77.$N.0/24"
    for h in "${HOSTS[@]}" sw; do echo "ZP_NS_${h^^}=$(ns "$h")"; done
    for h in "${HOSTS[@]}"; do echo "ZP_ADDR_${h^^}=$(addr "$h")"; done
    echo "ZP_C_ANCHOR=$anchor"
    echo "ZP_C_MONOTONIC_OFFSET=$ZP_C_MONOTONIC_OFFSET"
    echo "ZP_SSH_KEY=$key"
    echo "ZP_SSH_USER=root"
    echo "ZMQPERF_BIN=$bin"
    if [ "$slurm" = 1 ]; then
      echo "SLURM_CONF=$DIR/slurm.conf"
      echo "ZP_SLURM_NODE_B=${P}b"
      echo "ZP_SLURM_NODE_C=${P}c"
    fi
  } >"$DIR/env"
}

# ---------------------------------------------------------------------------------------------
down() {
  local f pid st left=() name
  if [ -d "$DIR/pids" ]; then
    for f in "$DIR"/pids/*.pid; do
      [ -e "$f" ] || continue
      read -r pid st <"$f" || continue
      name=$(basename "$f" .pid)
      # The reaper goes last (below): a down killed part-way (its caller ended by a
      # signal) leaves it watching, and it does the rest once the owner is gone.
      [ "$name" = reaper ] && continue
      if [ -n "$pid" ] && alive "$pid" "$st"; then
        kill -TERM "$pid" 2>/dev/null || true
        left+=("$pid $st")
      fi
    done
  fi
  local i e
  for ((i = 0; i < 60 && ${#left[@]} > 0; i++)); do
    local still=()
    for e in "${left[@]}"; do
      # shellcheck disable=SC2086
      alive $e && still+=("$e")
    done
    left=("${still[@]+"${still[@]}"}")
    [ ${#left[@]} -eq 0 ] || sleep 0.05
  done
  for e in "${left[@]+"${left[@]}"}"; do
    # shellcheck disable=SC2086
    set -- $e
    echo "testbed: pid $1 ignored TERM for 3 s: KILL"
    kill -KILL "$1" 2>/dev/null || true
  done
  failpoint down
  if load_id; then
    local h
    for h in "${HOSTS[@]}" sw; do
      ip netns del "$(ns "$h")" 2>/dev/null || true
    done
    # The id is free again for another testbed: a second down here must not touch it.
    mv "$DIR/id" "$DIR/id.down"
    say "down: $P"
  else
    say "down: $DIR holds no testbed id (nothing was made)"
  fi
  # Everything is down: the reaper may stop watching (it ends by itself at its next look;
  # a down that is not the reaper's own ends it now).
  touch "$DIR/down.done" 2>/dev/null || true
  if [ -z "${ZP_REAPING:-}" ] && [ -e "$DIR/pids/reaper.pid" ]; then
    read -r pid st <"$DIR/pids/reaper.pid" || true
    if [ -n "${pid:-}" ] && alive "$pid" "$st"; then
      kill -TERM "$pid" 2>/dev/null || true
      for ((i = 0; i < 60; i++)); do
        alive "$pid" "$st" || break
        sleep 0.05
      done
      if alive "$pid" "$st"; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
  fi
}

# ---------------------------------------------------------------------------------------------
need_up() {
  load_id || die "$DIR holds no testbed (run up first)"
  ip netns list | grep -q "^$P-sw\b" || die "testbed $P is not up (namespace $P-sw missing)"
}

link() { # link STATE HOST
  check_host "$2"
  need_up
  ip -n "$(ns sw)" link set "p-$2" "$1"
}

shape() { # shape HOST RATE
  check_host "$1"
  need_up
  [ -n "${2:-}" ] || die "shape DIR HOST RATE: a rate such as 100mbit or 1gbit"
  tc -n "$(ns "$1")" qdisc replace dev eth0 root tbf rate "$2" burst 64kb latency 50ms
  tc -n "$(ns sw)" qdisc replace dev "p-$1" root tbf rate "$2" burst 64kb latency 50ms
}

loss() { # loss HOST PCT
  check_host "$1"
  need_up
  local per10k
  per10k=$(awk -v p="${2:-}" 'BEGIN { if (p !~ /^[0-9]+(\.[0-9]+)?$/ || p > 100) exit 1; printf "%d", p * 100 + 0.5 }') ||
    die "loss DIR HOST PCT: a percentage from 0 to 100 (e.g. 2 or 0.5), not '${2:-}'"
  local n pick="numgen random mod 10000 < $per10k " verdict="counter drop"
  n=$(ns "$1")
  [ "$per10k" -lt 10000 ] || pick="" # numgen's values stop at 9999: 100% is every packet
  [ "$per10k" -gt 0 ] || verdict="counter" # 0%: counts, drops nothing
  ip netns exec "$n" nft add table inet zploss
  ip netns exec "$n" nft delete table inet zploss
  ip netns exec "$n" nft -f - <<NFT
table inet zploss {
  chain out { type filter hook output priority 0; policy accept; oifname "eth0" $pick$verdict; }
  chain in { type filter hook input priority 0; policy accept; iifname "eth0" $pick$verdict; }
}
NFT
}

unshape() { # unshape HOST
  check_host "$1"
  need_up
  tc -n "$(ns "$1")" qdisc del dev eth0 root 2>/dev/null || true
  tc -n "$(ns sw)" qdisc del dev "p-$1" root 2>/dev/null || true
  ip netns exec "$(ns "$1")" nft delete table inet zploss 2>/dev/null || true
}

usage() { sed -n '2,9p' "$SELF" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[ $# -ge 2 ] || usage
cmd=$1
DIR=$2
shift 2
case "$DIR" in /*) ;; *) DIR=$PWD/$DIR ;; esac
case "$cmd" in
  up)
    mkdir -p "$DIR"
    up "$@"
    ;;
  down) down ;;
  link-down) link down "$@" ;;
  link-up) link up "$@" ;;
  shape) shape "$@" ;;
  loss) loss "$@" ;;
  unshape) unshape "$@" ;;
  *) usage ;;
esac
