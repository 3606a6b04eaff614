#!/usr/bin/env bash
# One file over loopback (or through the emulator, --emu), in the same run, by longhaul send
# (plain, and sealed with the suite the two ends pick: the fastest each measures), UDT4 (Debian's
# libudt-dev, through the small peer in udtfile.cc, built here), kernel TCP (iperf3 -F, CUBIC) and
# scp (when sshd is installed). Prints, for each, the best of the rounds: Gb/s, Gb/s until the
# received file is flushed to the disk (longhaul's receiver flushes before it is done; the others
# leave the bytes in the page cache, so `sync FILE` after each ends the clock), CPU seconds per GB
# (both ends' user + system time), each end's peak memory (getrusage maxrss, as GNU time reports
# it), and the ratios to longhaul plain; then the rates' medians. Rounds are interleaved, so other
# load on the machine weighs on every tool alike.
#
#   bench/udt/run.sh [--size-mb N] [--rounds R] [--bin PATH] [--base PATH] [--only LIST]
#                    [--dir DIR] [--md FILE] [--discard] [--emu 'EMU ARGS'] [--cc CC]
#
# --size-mb: the file (default 1024; incompressible bytes, read once so it is in the page cache).
# --bin: the longhaul to measure (default target/ci/longhaul). --base: another longhaul binary
# measured alike (rows "base plain", "base sealed"), e.g. the build before a change.
# --only: a comma-separated subset of longhaul-plain, longhaul-sealed, base-plain, base-sealed, udt,
# iperf3, scp. --dir: where the receivers write the file (default: a temporary directory under
# /tmp, a real file on disk). --md: also write the table as markdown. --discard: every receiver
# drops what it receives instead of writing a file (longhaul recv --discard, which still checks
# the file's digest; UDT4 and scp into /dev/null; iperf3's server without -F), to measure the
# transports without the receiving disk; the received bytes are then not compared.
# --emu: instead of loopback, every transfer crosses `longhaul emu pair EMU ARGS` (needs root):
# each receiver runs on host A, each sender on host B, e.g. --emu '--rate 1gbit --delay 90ms
# --loss 0.1% --queue-packets 4000 --busy-poll' for seed 000's path. The emulator's own CPU is
# not counted. iperf3 and scp use the kernel's CUBIC (iperf3 -C cubic; for scp it is made the
# namespaces' default) with TCP buffers raised to 64 MiB in both namespaces (scp is still held
# by ssh's own channel window), UDT4 its own congestion control; longhaul uses its default,
# FAST, or with --cc the congestion control CC (`longhaul send -C CC`, e.g. `cubic`, to compare
# the transports' cost with the kernel TCP's own control: on loopback FAST's delay signal is
# the CPU's scheduling). Choose --size-mb for the slowest tool on a lossy path. On loopback scp uses the host's
# default control, which the summary names.
#
# Needs g++ and libudt-dev, iperf3, and for scp openssh-server (scripts/packages.txt); sshd
# is started on the receiving host with keys of the script's own, once per scp round, and its
# time covers the receiving side.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$root/target/ci/longhaul"
base=""
size_mb=1024
rounds=3
only=""
dir=""
md=""
discard=0
emu_args=""
cc=""
tag=bench/udt
# shellcheck source=../lib.sh
. "$here/../lib.sh"

while [ $# -gt 0 ]; do
  case "$1" in
    --size-mb) size_mb="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --base) base="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --md) md="$2"; shift 2 ;;
    --discard) discard=1; shift ;;
    --emu) emu_args="$2"; shift 2 ;;
    --cc) cc="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

[ -x "$bin" ] || die "no longhaul at $bin: cargo build --profile ci --bin longhaul"
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is missing"
[ -f /usr/include/udt/udt.h ] || die "libudt-dev is missing: apt-get install libudt-dev"
command -v iperf3 >/dev/null || die "iperf3 is missing: apt-get install iperf3"

scratch="$(mktemp -d /tmp/longhaul-udt.XXXXXX)"
pids=()
emu_pid=""
allowed_before=""
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_emu
  [ -z "$allowed_before" ] ||
    sysctl -q -w net.ipv4.tcp_allowed_congestion_control="$allowed_before" || true
  rm -rf "$scratch"
}
trap cleanup EXIT
[ -n "$dir" ] || dir="$scratch/rx"
mkdir -p "$dir"

udt="$scratch/udtfile"
g++ -O2 -std=c++17 -o "$udt" "$here/udtfile.cc" -ludt -lpthread || die "building udtfile failed"

runs="longhaul-plain longhaul-sealed"
[ -n "$base" ] && runs+=" base-plain base-sealed"
runs+=" udt iperf3"
if [ -x /usr/sbin/sshd ] && command -v scp >/dev/null; then
  runs+=" scp"
else
  echo "$tag: sshd or scp not installed: scp skipped" >&2
fi
if [ -n "$only" ]; then
  keep=""
  for r in $runs; do [[ ",$only," == *",$r,"* ]] && keep+=" $r"; done
  runs="$keep"
fi

src="$scratch/file.bin"
head -c $((size_mb << 20)) /dev/urandom >"$src"
cat "$src" >/dev/null
size=$((size_mb << 20))

make_keys "$bin" "$scratch/rx-home" "$scratch/tx-home"

# Where the ends run: both on loopback, or the receiver on the emulator's host A and the sender
# on host B. `rx` and `tx` prefix each end's command.
rx=()
tx=()
host=127.0.0.1
path="127.0.0.1"
if [ -n "$emu_args" ]; then
  [ "$(id -u)" -eq 0 ] || die "--emu needs root (network namespaces, TUN devices)"
  read -r -a emu_words <<<"$emu_args"
  start_emu "$bin" "$scratch" "${emu_words[@]}"
  rx=("$bin" emu exec --id "$emu_pid" a --)
  tx=("$bin" emu exec --id "$emu_pid" b --)
  host=$addr_a
  path="longhaul emu pair $emu_args"
  # Kernel TCP as a long fat path's user tunes it (and as `longhaul lab` runs it): buffers up
  # to 64 MiB, longhaul's window, instead of the 6 MiB default that caps a 180-ms path at about
  # 150 Mb/s. Per namespace, so the host's settings are untouched.
  # scp's connection takes the namespace's default control: CUBIC, as iperf3's. A namespace
  # may only pick a control the host allows, so cubic is allowed for the run (restored on exit).
  allowed_before=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
  if [[ " $allowed_before " != *" cubic "* ]]; then
    sysctl -q -w net.ipv4.tcp_allowed_congestion_control="$allowed_before cubic" ||
      die "cannot allow cubic in net.ipv4.tcp_allowed_congestion_control"
  fi
  for side in a b; do
    "$bin" emu exec --id "$emu_pid" "$side" -- sysctl -q -w \
      net.ipv4.tcp_rmem="4096 131072 67108864" net.ipv4.tcp_wmem="4096 16384 67108864" \
      net.ipv4.tcp_congestion_control=cubic ||
      die "cannot set tcp_rmem, tcp_wmem and tcp_congestion_control on host $side"
  done
fi
# What scp's TCP connection uses (named in the summary).
scp_cc=$(${tx[@]+"${tx[@]}"} sysctl -n net.ipv4.tcp_congestion_control)

if [[ " $runs " == *" scp "* ]]; then
  sshdir="$scratch/ssh"
  mkdir -p "$sshdir" /run/sshd
  ssh-keygen -q -t ed25519 -N "" -f "$sshdir/host"
  ssh-keygen -q -t ed25519 -N "" -f "$sshdir/client"
  cp "$sshdir/client.pub" "$sshdir/authorized_keys"
  sshd_config "$sshdir" "Port 2299" "ListenAddress $host" >"$sshdir/sshd_config"
  ssh_opts=(-F /dev/null -i "$sshdir/client" -o IdentitiesOnly=yes -o StrictHostKeyChecking=no
    -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -P 2299)
fi

port=5390
# Wait for the TCP or UDP port $1 to be bound on loopback (at most 10 s).
wait_port() {
  local _
  for _ in $(seq 1 100); do
    ${rx[@]+"${rx[@]}"} ss -Htuln "sport = :$1" | grep -q . && return 0
    sleep 0.1
  done
  die "nothing listens on port $1"
}

# One transfer: sets wall (s), disk_wall (s, until the file is flushed to the disk), cpu (s,
# both ends), rx_rss and tx_rss (KiB).
# time(1) writes "elapsed user system maxrss" for each end.
one() { # RUN
  local run=$1 out="$dir/received.bin" rx_pid t0 t1 t2 lh
  [ $discard -eq 0 ] || out=/dev/null
  rm -rf "${dir:?}"/* "$dir"/.longhaul-partial
  port=$((port + 1))
  local tm=(/usr/bin/time -f "%e %U %S %M")
  case $run in
    longhaul-* | base-*)
      lh="$bin"; [[ $run == base-* ]] && lh="$base"
      local sec=(); [[ $run == *-plain ]] && sec=(--insecure)
      [ -z "$cc" ] || sec+=(-C "$cc")
      local into=(-d "$dir"); [ $discard -eq 0 ] || into=(--discard)
      LONGHAUL_HOME="$scratch/rx-home" ${rx[@]+"${rx[@]}"} "${tm[@]}" -o "$scratch/rx.time" \
        "$lh" recv --once -B "$host" -p $port "${into[@]}" ${sec[@]+"${sec[@]}"} \
        >"$scratch/rx.log" 2>&1 &
      rx_pid=$!
      wait_port $port
      t0=$(date +%s.%N)
      LONGHAUL_HOME="$scratch/tx-home" ${tx[@]+"${tx[@]}"} "${tm[@]}" -o "$scratch/tx.time" \
        "$lh" send ${sec[@]+"${sec[@]}"} --name received.bin -i 1h "$src" "$host:$port" \
        >"$scratch/tx.log" 2>&1 ||
        die "$run: send failed: $(tail -3 "$scratch/tx.log")"
      ;;
    udt)
      ${rx[@]+"${rx[@]}"} "${tm[@]}" -o "$scratch/rx.time" "$udt" recv $port "$out" "$host" \
        >"$scratch/rx.log" 2>&1 &
      rx_pid=$!
      wait_port $port
      t0=$(date +%s.%N)
      ${tx[@]+"${tx[@]}"} "${tm[@]}" -o "$scratch/tx.time" "$udt" send "$host" $port "$src" \
        >"$scratch/tx.log" 2>&1 ||
        die "udt: send failed: $(cat "$scratch/tx.log")"
      ;;
    iperf3)
      local to_file=(-F "$out"); [ $discard -eq 0 ] || to_file=()
      ${rx[@]+"${rx[@]}"} "${tm[@]}" -o "$scratch/rx.time" iperf3 -s -1 -B "$host" -p $port \
        ${to_file[@]+"${to_file[@]}"} >"$scratch/rx.log" 2>&1 &
      rx_pid=$!
      wait_port $port
      t0=$(date +%s.%N)
      ${tx[@]+"${tx[@]}"} "${tm[@]}" -o "$scratch/tx.time" iperf3 -c "$host" -p $port -C cubic \
        -F "$src" -n $size >"$scratch/tx.log" 2>&1 || die "iperf3: client failed: $(tail -3 "$scratch/tx.log")"
      ;;
    scp)
      ${rx[@]+"${rx[@]}"} "${tm[@]}" -o "$scratch/rx.time" /usr/sbin/sshd -D -e \
        -f "$sshdir/sshd_config" 2>"$scratch/rx.log" &
      rx_pid=$!
      wait_port 2299
      t0=$(date +%s.%N)
      ${tx[@]+"${tx[@]}"} "${tm[@]}" -o "$scratch/tx.time" scp -q "${ssh_opts[@]}" "$src" \
        "root@$host:$out" >"$scratch/tx.log" 2>&1 || die "scp failed: $(cat "$scratch/tx.log")"
      ;;
  esac
  pids=("$rx_pid")
  if [ "$run" = scp ]; then
    t1=$(date +%s.%N)
    # The sshd process named by its config (its pid file holds the pid in the emulator's pid
    # namespace, and time and emu exec carry the same words in their command lines).
    local p
    for p in $(pgrep -f -- "-f $sshdir/sshd_config" || true); do
      [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sshd ] && kill -TERM "$p" 2>/dev/null || true
    done
    wait "$rx_pid" 2>/dev/null || true
  else
    wait "$rx_pid" || die "$run: the receiver failed: $(tail -3 "$scratch/rx.log")"
    t1=$(date +%s.%N)
  fi
  pids=()
  # On disk: the file flushed (longhaul's receiver syncs the file before it renames it into
  # place, so this costs it nothing; iperf3, UDT4's peer and scp leave their bytes in the page
  # cache). With --discard there is nothing to flush and the two rates are the same.
  [ $discard -eq 1 ] || sync "$out"
  t2=$(date +%s.%N)
  local got
  got=$(stat -c %s "$out" 2>/dev/null || echo 0)
  if [ $discard -eq 1 ]; then
    : # Nothing kept to compare; longhaul's receiver checked the digest, the others exited 0.
  elif [ "$run" = iperf3 ]; then
    # iperf3's server may stop writing before the last megabytes are read from the socket, and
    # it checks nothing: the client's byte count stands, the file is not compared.
    (( got > size * 9 / 10 )) || die "iperf3: received $got bytes of $size"
  else
    [ "$got" -eq "$size" ] || die "$run: received $got bytes of $size"
    cmp -s "$src" "$out" || die "$run: the received file differs"
  fi
  wall=$(echo "$t1 - $t0" | bc -l)
  disk_wall=$(echo "$t2 - $t0" | bc -l)
  read -r _ ru rs rx_rss <"$scratch/rx.time"
  read -r _ tu ts tx_rss <"$scratch/tx.time"
  cpu=$(echo "$ru + $rs + $tu + $ts" | bc -l)
}

declare -A best_wall best_cpu best_disk walls disk_walls max_rx max_tx
# The median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$rounds"); do
  # The source back in the page cache, whatever the receivers' writes pushed out.
  cat "$src" >/dev/null
  for run in $runs; do
    one "$run"
    walls[$run]+=" $wall"
    disk_walls[$run]+=" $disk_wall"
    printf '%s: round %d %-15s %6.2f s (on disk %6.2f s)  cpu %6.2f s  rss rx %6d KiB tx %6d KiB\n' \
      "$tag" "$r" "$run" "$wall" "$disk_wall" "$cpu" "$rx_rss" "$tx_rss" >&2
    if [ -z "${best_disk[$run]:-}" ] || (($(echo "$disk_wall < ${best_disk[$run]}" | bc -l))); then
      best_disk[$run]=$disk_wall
    fi
    if [ -z "${best_wall[$run]:-}" ] || (($(echo "$wall < ${best_wall[$run]}" | bc -l))); then
      best_wall[$run]=$wall
      best_cpu[$run]=$cpu
    fi
    ((rx_rss > ${max_rx[$run]:-0})) && max_rx[$run]=$rx_rss
    ((tx_rss > ${max_tx[$run]:-0})) && max_tx[$run]=$tx_rss
  done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

ref=""
for run in $runs; do [ -z "$ref" ] && ref=$run; done
gb=$(echo "$size / 1000000000" | bc -l)
table="| transfer | Gb/s | Gb/s on disk | Gb/s median | on disk median | CPU s/GB | peak RSS receiver | peak RSS sender | rate vs $ref | on-disk rate vs $ref | CPU/GB vs $ref |
|---|---|---|---|---|---|---|---|---|---|---|"
for run in $runs; do
  rate=$(echo "$size * 8 / ${best_wall[$run]} / 1000000000" | bc -l)
  cpg=$(echo "${best_cpu[$run]} / $gb" | bc -l)
  disk_rate=$(echo "$size * 8 / ${best_disk[$run]} / 1000000000" | bc -l)
  rr=$(echo "${best_wall[$ref]} / ${best_wall[$run]}" | bc -l)
  dr=$(echo "${best_disk[$ref]} / ${best_disk[$run]}" | bc -l)
  cr=$(echo "${best_cpu[$run]} / ${best_cpu[$ref]}" | bc -l)
  # shellcheck disable=SC2086 # the lists split into their numbers
  med=$(echo "$size * 8 / $(median ${walls[$run]}) / 1000000000" | bc -l)
  # shellcheck disable=SC2086
  disk_med=$(echo "$size * 8 / $(median ${disk_walls[$run]}) / 1000000000" | bc -l)
  table+=$(printf '\n| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f MiB | %.0f MiB | %.2f× | %.2f× | %.2f× |' \
    "$run" "$rate" "$disk_rate" "$med" "$disk_med" "$cpg" \
    "$(echo "${max_rx[$run]} / 1024" | bc -l)" "$(echo "${max_tx[$run]} / 1024" | bc -l)" \
    "$rr" "$dr" "$cr")
done
into="a file on disk"; [ $discard -eq 0 ] || into="nothing (receivers discard)"
summary="$size_mb MiB over $path into $into, best of $rounds interleaved rounds (longhaul with ${cc:-fast}, iperf3 with cubic, scp with $scp_cc); load average $load0 → $load1"
echo "$summary"
echo "$table"
if [ -n "$md" ]; then
  printf '%s\n\n%s\n' "$summary" "$table" >"$md"
fi
