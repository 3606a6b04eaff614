#!/usr/bin/env bash
# Resume after a kill: how many bytes a cut transfer moves again.
#
#   bench/resume/run.sh [--size-mb N] [--rate-limit R] [--at PERCENT] [--bin PATH]
#
# Over loopback, authenticated as in normal use (keys from `longhaul keygen` in temporary
# LONGHAUL_HOMEs): `longhaul send --rate-limit R` (default 800mbit, so a 1 GiB file (the
# default) takes about 11 s) of one file of incompressible bytes; when the receiver's part file
# (in DIR/.longhaul-partial/) reaches --at percent (default 50) of the file, one end is killed
# with SIGKILL:
#
# 1. the receiver: it is started again, and the same file sent again (`send -J`);
# 2. the sender: the file is sent again at once, to the same receiver (which ends the dead
#    sender's session when the new one's HELLO authenticates).
#
# For each it prints the part file's size when the kill happened (bytes that had reached the
# receiver's disk), the second session's bytes_resumed and bytes_sent, and the bytes moved
# again: those on the receiver's disk at the kill that the second session sent anyway (part
# file − resumed), absolute and as a share of the file. The goal is below 1 % of the file.
# Needs no root; needs the release build (`cargo build --release -p longhaul`).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$root/target/release/longhaul"
size_mb=1024
rate=800mbit
at=50

tag=bench/resume
# shellcheck source=../lib.sh
. "$here/../lib.sh"

while [ $# -gt 0 ]; do
  case "$1" in
    --size-mb) size_mb="$2"; shift 2 ;;
    --rate-limit) rate="$2"; shift 2 ;;
    --at) at="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
[ -x "$bin" ] || die "no longhaul binary at $bin; build it with: cargo build --release -p longhaul"

scratch="$(mktemp -d /tmp/lh-bench-resume.XXXXXX)"
pids=()
cleanup() {
  local rc=$? p
  set +e
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  if [ $rc -eq 0 ]; then rm -rf "$scratch"; else echo "bench/resume: failed; logs kept in $scratch" >&2; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rx_home="$scratch/rx-home"
tx_home="$scratch/tx-home"
make_keys "$bin" "$rx_home" "$tx_home"

file="$scratch/big.bin"
size=$((size_mb * 1048576))
head -c "$size" /dev/urandom >"$file"
port=$((40000 + $$ % 20000))

start_recv() { # DIR LOG
  LONGHAUL_HOME="$rx_home" "$bin" recv -B 127.0.0.1 -p "$port" -d "$1" \
    >"$2.out" 2>"$2.err" &
  recv_pid=$!
  pids+=("$recv_pid")
  sleep 0.3
  kill -0 "$recv_pid" 2>/dev/null || die "longhaul recv did not start: $(cat "$2.err")"
}

part_size() { # DIR: size of the largest part file, 0 if none
  local f s=0 n
  for f in "$1"/.longhaul-partial/*.part; do
    [ -e "$f" ] || continue
    n=$(stat -c %s "$f")
    [ "$n" -gt "$s" ] && s=$n
  done
  echo "$s"
}

rows=()
case_run() { # receiver|sender
  local who="$1" dst="$scratch/dst-$1"
  mkdir -p "$dst"
  start_recv "$dst" "$scratch/recv1-$who"
  LONGHAUL_HOME="$tx_home" "$bin" send -J --rate-limit "$rate" \
    "$file" "127.0.0.1:$port" >"$scratch/send1-$who.json" 2>"$scratch/send1-$who.err" &
  local send_pid=$!
  pids+=("$send_pid")
  local target=$((size * at / 100)) t=0 p=0
  while :; do
    p=$(part_size "$dst")
    [ "$p" -ge "$target" ] && break
    kill -0 "$send_pid" 2>/dev/null || die "the first send ended before $at %: $(cat "$scratch/send1-$who.err")"
    t=$((t + 1))
    [ $t -lt 60000 ] || die "the part file did not reach $at % in 600 s"
    sleep 0.01
  done
  local victim
  if [ "$who" = receiver ]; then victim=$recv_pid; else victim=$send_pid; fi
  kill -9 "$victim"
  wait "$victim" 2>/dev/null || true
  local at_kill
  at_kill=$(part_size "$dst")
  if [ "$who" = receiver ]; then
    # The sender cannot finish without its receiver; stop it too.
    kill -9 "$send_pid" 2>/dev/null || true
    wait "$send_pid" 2>/dev/null || true
    start_recv "$dst" "$scratch/recv2-$who"
  else
    sleep 0.5
  fi
  LONGHAUL_HOME="$tx_home" "$bin" send -J "$file" "127.0.0.1:$port" \
    >"$scratch/send2-$who.json" 2>"$scratch/send2-$who.err" ||
    die "the second send failed: $(cat "$scratch/send2-$who.err")"
  cmp -s "$file" "$dst/big.bin" || die "the file arrived damaged after the $who was killed"
  local sent resumed
  sent=$(sed -n 's/.*"bytes_sent": *\([0-9]*\).*/\1/p' "$scratch/send2-$who.json" | head -1)
  resumed=$(sed -n 's/.*"bytes_resumed": *\([0-9]*\).*/\1/p' "$scratch/send2-$who.json" | head -1)
  [ -n "$sent" ] && [ -n "$resumed" ] || die "no bytes_sent/bytes_resumed in $(cat "$scratch/send2-$who.json")"
  [ $((sent + resumed)) -eq "$size" ] || echo "note: bytes_sent + bytes_resumed = $((sent + resumed)), not $size" >&2
  local again=$((at_kill - resumed))
  local share
  share=$(awk -v a="$again" -v n="$size" 'BEGIN { printf "%.3f", a * 100 / n }')
  rows+=("$who|$at_kill|$resumed|$sent|$again|$share %")
  kill "$recv_pid" 2>/dev/null || true
  wait "$recv_pid" 2>/dev/null || true
}

case_run receiver
case_run sender

echo "resume after SIGKILL at $at %: $size_mb MiB ($size bytes), loopback, send --rate-limit $rate, sealed; $(date -u +%Y-%m-%d)"
echo
echo "| killed | part file at the kill (bytes) | resumed | sent again by the second session | moved again (part file − resumed) | share of the file |"
echo "|---|---|---|---|---|---|"
for r in "${rows[@]}"; do
  IFS='|' read -r a b c d e f <<<"$r"
  echo "| $a | $b | $c | $d | $e | $f |"
done
