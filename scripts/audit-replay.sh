#!/usr/bin/env bash
# Replays reproductions of the reliability audit (issue 19) against a build: each line is
# the item, the exit code and what the command said. Usage: scripts/audit-replay.sh [ZMQPERF]
# (default target/debug/zmqperf). Loopback ports 21002-21052 and a temp folder only.
Z=${1:-target/debug/zmqperf}
T=$(mktemp -d /tmp/replay.XXXX)
trap 'rm -rf "$T"' EXIT
line(){ printf '%s | exit %s | %s\n' "$1" "$2" "$(echo "$3" | tr '\n' ' ' | cut -c1-260)"; }
# B1: publisher killed mid fan-out; gate must fail.
$Z sub-cluster -c 2 -n 10 -h tcp://127.0.0.1:21002 --idle 2s --db $T/h.db >/dev/null 2>$T/b1.err & S=$!
sleep 1; $Z pub -t 100 -n 1 -p 100 -h tcp://127.0.0.1:21002 --subs 20 >/dev/null 2>&1 & P=$!
sleep 5; kill -9 $P; wait $S; rc=$?
line "B1 sub-cluster, pub killed" $rc "$(grep -E 'error|cut|left out' $T/b1.err | head -2)"
out=$($Z show last --db $T/h.db 2>&1); rc=$?; out=$(echo "$out" | grep -iE 'incomplete|cut short|requested|of 20' | head -2); line "B1 show last" $rc "$out"
# B2: nothing compared.
printf '[[node]]\nname="a"\nrole="source"\nsocket={type="PUSH",bind=["auto"]}\n[[node]]\nname="b"\nrole="sink"\nsocket={type="PULL",connect=["a"],rcvhwm=-1}\n' > $T/neg.toml
$Z run $T/neg.toml --count 1000 --repetitions 1 --db $T/g.db >/dev/null 2>$T/b2.err; line "B2 run rcvhwm=-1" $? "$(tail -1 $T/b2.err)"
printf '[[case]]\npattern="pushpull"\ntransport="inproc"\nsize=64\ncount=1000\n[[case]]\npattern="pushpull"\ntransport="inproc"\nsize=128\ncount=1000\n' > $T/w.toml
$Z run $T/w.toml --repetitions 2 --db $T/g2.db >/dev/null 2>&1
printf 'repetitions = 0\n[[case]]\npattern="pushpull"\ntransport="inproc"\nsize=64\n' > $T/w0.toml
$Z run $T/w0.toml --db $T/g2.db >/dev/null 2>$T/b2b.err; line "B2/B6 workload repetitions=0" $? "$(tail -1 $T/b2b.err)"
out=$($Z compare last last --fail-above 5% --db $T/g2.db 2>&1); rc=$?; out=$(echo "$out" | tail -1); line "B2 compare last last" $rc "$out"
# B6: a topology of one proxy; pyzmq over inproc.
printf '[[node]]\nname="p"\nrole="proxy"\nsockets=[{type="ROUTER",bind=["auto"]},{type="DEALER",bind=["auto"]}]\n' > $T/proxy.toml
$Z run $T/proxy.toml --count 1000 --repetitions 1 --no-history >/dev/null 2>$T/b6.err; line "B6 proxy alone" $? "$(tail -1 $T/b6.err)"
$Z run --impl pyzmq --patterns reqrep --transports inproc --no-history >/dev/null 2>$T/b6b.err; line "B6 pyzmq inproc" $? "$(tail -1 $T/b6b.err)"
# B7: IPv6 fan-out.
out=$($Z fanout -c 1 -s 3 -t 0 -n 100 -p 2 -h 'tcp://[::1]:*' --no-history 2>&1); rc=$?; out=$(echo "$out" | grep -E 'delivered|error' | head -1); line "B7 fanout [::1]" $rc "$out"
# B10: check_send to no one.
out=$($Z check_send 1000 PAIR connect tcp://127.0.0.1:21041 --timeout 2s 2>&1); rc=$?; out=$(echo "$out" | tail -1); line "B10 check_send PAIR to no one" $rc "$out"
# B12: -o through a hard link to the history.
$Z run --patterns pushpull --transports inproc --sizes 64 --count 1000 --repetitions 1 --db $T/h12.db >/dev/null 2>&1
ln $T/h12.db $T/report.html
out=$($Z report last --db $T/h12.db --format html -o $T/report.html 2>&1); rc=$?; out=$(echo "$out" | tail -1); line "B12 report -o hard link" $rc "$out"
out=$($Z history --db $T/h12.db 2>&1); rc=$?; out=$(echo "$out" | head -2 | tail -1); line "B12 history after" $rc "$out"
# B13: --db a FIFO.
mkfifo $T/f.db; out=$(timeout 10 $Z history --db $T/f.db 2>&1); rc=$?; out=$(echo "$out" | tail -1); line "B13 --db FIFO" $rc "$out"
# Causes: MM3 (END says 1000 of COUNT 2000), check_recv no-peer advice.
$Z local_thr tcp://127.0.0.1:21050 64 2000 --timeout 5s >$T/mm3.out 2>$T/mm3.err & L=$!; sleep 0.5
$Z remote_thr tcp://127.0.0.1:21050 64 1000 >/dev/null 2>&1; wait $L; line "MM3 local_thr 2000 vs remote_thr 1000" $? "$(cat $T/mm3.err | tail -1)"
out=$($Z check_recv 10 PULL bind tcp://127.0.0.1:21051 1000 2>&1); rc=$?; out=$(echo "$out" | tail -1); line "C-9 check_recv no peer" $rc "$out"
# G08, T01, T03, T06.
out=$($Z diagnose --connect tcp://127.0.0.1:21052 --type SUB --duration 1s --no-history 2>&1); rc=$?; out=$(echo "$out" | tail -1); line "G08 listen hears nothing" $rc "$out"
: > $T/empty.toml; out=$($Z topology check $T/empty.toml 2>&1); line "T01 empty topology" $? "$out"
printf 'name = "caf\xe9"\n' > $T/l1.toml; out=$($Z topology check $T/l1.toml 2>&1); line "T03 non-UTF-8" $? "$out"
rm -rf $T
