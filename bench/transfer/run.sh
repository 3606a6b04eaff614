#!/usr/bin/env bash
# Transfer time through the emulator: one set of files moved across `longhaul emu pair`
# (default 1 Gb/s, 90 ms each way, 0.1 % random loss, a 4000-packet droptail queue as the lab's
# seed 000 scenario) by `longhaul send` (authenticated, -C fast and -C bbr) and by scp and
# rsync over ssh with the kernel's cubic, bbr and longhaul's eBPF FAST. Prints one table (time to
# completion, goodput) and writes it as markdown.
#
#   sudo bench/transfer/run.sh [--size-mb N] [--files K] [--only LIST] [--timeout S]
#                              [--md FILE] [--bin PATH] [--rate R] [--delay D] [--loss P]
#                              [--queue-packets Q] [--busy-poll] [--coalesce D] [--plain]
#
# --size-mb: total size of the file set (default 2048: 2 GiB), split into --files files
# (default 4) of incompressible bytes. --only: a comma-separated subset of the runs
# (longhaul-fast, longhaul-bbr, scp-cubic, rsync-cubic, scp-bbr, rsync-bbr, scp-fast, rsync-fast).
# --timeout: seconds one run may take before it is reported as timed out (default 3600).
# --plain: longhaul's runs unauthenticated and unencrypted (`--insecure` at both ends), to tell
# the seal's cost from the transport's.
# --coalesce D: the emulator's `--coalesce` (default 20us): consecutive wire packets of one
# super-packet whose releases lie within D reach the receiving host together, as one GRO
# super-packet, as a receiving NIC's interrupt moderation and GRO would hand them over.
# --busy-poll: the emulator forwards with one busy-polling thread on a CPU of its own
# (`longhaul emu --busy-poll`), releases punctual to microseconds; the ends share the other CPUs.
#
# Needs root (namespaces, TUN, sshd, eBPF), the release build (`cargo build --release -p
# longhaul`) and ssh, sshd, scp and rsync (scripts/setup.sh installs them). Side A of the pair
# receives (`longhaul recv`, sshd); side B sends (`longhaul send`, the ssh client), so the
# congestion control that matters is side B's: `net.ipv4.tcp_congestion_control` is set in B's
# namespace for each kernel run (a namespace may only pick controls listed in the global
# `net.ipv4.tcp_allowed_congestion_control`, so bbr and fast are added there for the run and the
# list is restored on exit). Which control the ssh connection used is read with `ss -ti` during
# the run and the run fails if it is not the one asked for.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$root/target/release/longhaul"
size_mb=2048
files=4
only=""
timeout_s=3600
md=""
rate=1gbit
delay=90ms
loss=0.1%
queue=4000
busy_poll=()
coalesce=()
insecure=()

tag=bench/transfer
# shellcheck source=../lib.sh
. "$here/../lib.sh"

while [ $# -gt 0 ]; do
  case "$1" in
    --size-mb) size_mb="$2"; shift 2 ;;
    --files) files="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --md) md="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --delay) delay="$2"; shift 2 ;;
    --loss) loss="$2"; shift 2 ;;
    --queue-packets) queue="$2"; shift 2 ;;
    --busy-poll) busy_poll=(--busy-poll); shift ;;
    --coalesce) coalesce=(--coalesce "$2"); shift 2 ;;
    --plain) insecure=(--insecure); shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, TUN devices, sshd, eBPF)"
[ -x "$bin" ] || die "no longhaul binary at $bin; build it with: cargo build --release -p longhaul"
for t in ssh scp rsync ssh-keygen ss sysctl ip timeout; do
  command -v "$t" >/dev/null || die "$t is missing; run scripts/setup.sh"
done
[ -x /usr/sbin/sshd ] || die "/usr/sbin/sshd is missing; run scripts/setup.sh"
[ "$size_mb" -ge "$files" ] || die "--size-mb must be at least --files"

all_runs="longhaul-fast longhaul-bbr scp-cubic rsync-cubic scp-bbr rsync-bbr scp-fast rsync-fast"
runs="$all_runs"
if [ -n "$only" ]; then
  runs="${only//,/ }"
  for r in $runs; do
    [[ " $all_runs " == *" $r "* ]] || die "unknown run $r (known: $all_runs)"
  done
fi

scratch="$(mktemp -d /tmp/lh-bench-transfer.XXXXXX)"
emu_pid=""
sshd_pid=""
recv_pid=""
fast_loaded_here=0
allowed_before="$(sysctl -n net.ipv4.tcp_allowed_congestion_control)"

cleanup() {
  local rc=$?
  set +e
  [ -n "$recv_pid" ] && kill "$recv_pid" 2>/dev/null && wait "$recv_pid" 2>/dev/null
  [ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null && wait "$sshd_pid" 2>/dev/null
  stop_emu
  sysctl -q -w net.ipv4.tcp_allowed_congestion_control="$allowed_before" >/dev/null
  [ "$fast_loaded_here" -eq 1 ] && "$bin" kernel unload fast >/dev/null 2>&1
  if [ $rc -eq 0 ]; then
    rm -rf "$scratch"
  else
    echo "bench/transfer: failed; logs kept in $scratch" >&2
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The file set: incompressible bytes, the same for every run.
src="$scratch/src"
mkdir -p "$src"
per_file=$((size_mb / files))
total_bytes=0
echo "making $files files of $per_file MiB in $src" >&2
for i in $(seq 1 "$files"); do
  head -c "$((per_file * 1048576))" /dev/urandom >"$src/part$i.bin"
  total_bytes=$((total_bytes + per_file * 1048576))
done
set_names=("$src"/part*.bin)

# The emulated path.
start_emu "$bin" "$scratch" --rate "$rate" --delay "$delay" --loss "$loss" --queue-packets "$queue" \
  ${busy_poll[@]+"${busy_poll[@]}"} ${coalesce[@]+"${coalesce[@]}"}
on_a() { "$bin" emu exec --id "$emu_pid" a -- "$@"; }
on_b() { "$bin" emu exec --id "$emu_pid" b -- "$@"; }

# Congestion controls for the kernel runs.
avail="$(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"
needs_fast=0
needs_bbr=0
for r in $runs; do
  case "$r" in *-fast) [[ $r == longhaul-* ]] || needs_fast=1 ;; esac
  case "$r" in scp-bbr | rsync-bbr) needs_bbr=1 ;; esac
done
if [ $needs_bbr -eq 1 ] && [[ " $avail " != *" bbr "* ]]; then
  modprobe tcp_bbr 2>/dev/null || die "the kernel has no bbr (tcp_available_congestion_control: $avail) and modprobe tcp_bbr failed"
fi
if [ $needs_fast -eq 1 ] && [[ " $avail " != *" fast "* ]]; then
  "$bin" kernel load fast >"$scratch/kernel.out" 2>&1 || die "longhaul kernel load fast failed: $(cat "$scratch/kernel.out")"
  fast_loaded_here=1
fi
allowed="$allowed_before"
wanted="cubic"
[ $needs_bbr -eq 0 ] || wanted="$wanted bbr"
[ $needs_fast -eq 0 ] || wanted="$wanted fast"
for cc in $wanted; do
  [[ " $allowed " == *" $cc "* ]] || allowed="$allowed $cc"
done
if [ $((needs_fast + needs_bbr)) -gt 0 ]; then
  sysctl -q -w net.ipv4.tcp_allowed_congestion_control="$allowed" >/dev/null ||
    die "cannot allow $allowed in net.ipv4.tcp_allowed_congestion_control"
fi

# sshd on side A with keys of its own (the machine's ssh setup is neither used nor changed).
sshdir="$scratch/ssh"
mkdir -p "$sshdir" /run/sshd
ssh-keygen -q -t ed25519 -N "" -f "$sshdir/host"
ssh-keygen -q -t ed25519 -N "" -f "$sshdir/client"
cp "$sshdir/client.pub" "$sshdir/authorized_keys"
sshd_config "$sshdir" "Port 22" >"$sshdir/sshd_config"
ssh_opts=(-F /dev/null -i "$sshdir/client" -o IdentitiesOnly=yes -o StrictHostKeyChecking=no
  -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o ConnectTimeout=30 -o LogLevel=ERROR)
needs_ssh=0
for r in $runs; do [[ $r == longhaul-* ]] || needs_ssh=1; done
if [ $needs_ssh -eq 1 ]; then
  on_a /usr/sbin/sshd -D -e -f "$sshdir/sshd_config" 2>"$sshdir/sshd.log" &
  sshd_pid=$!
  for _ in $(seq 1 300); do
    [ -f "$sshdir/sshd.pid" ] && break
    kill -0 "$sshd_pid" 2>/dev/null || die "sshd exited: $(cat "$sshdir/sshd.log")"
    sleep 0.1
  done
  [ -f "$sshdir/sshd.pid" ] || die "sshd not listening after 30 s: $(cat "$sshdir/sshd.log")"
  on_b ssh "${ssh_opts[@]}" "root@$addr_a" true || die "ssh into side A failed: $(cat "$sshdir/sshd.log")"
fi

# longhaul's keys: a pair for each end, the sender's authorized on the receiver.
rx_home="$scratch/rx-home"
tx_home="$scratch/tx-home"
make_keys "$bin" "$rx_home" "$tx_home"

# Checks that DIR holds the whole set, byte for byte.
verify() {
  local dir="$1" f
  for f in "${set_names[@]}"; do
    cmp -s "$f" "$dir/$(basename "$f")" || die "$(basename "$f") arrived damaged or not at all in $dir"
  done
}

now() { date +%s.%N; }
results=()

run_longhaul() {
  local cc="$1" dst="$scratch/dst-longhaul-$1"
  mkdir -p "$dst"
  LONGHAUL_HOME="$rx_home" on_a "$bin" recv ${insecure[@]+"${insecure[@]}"} -n 1 -d "$dst" >"$scratch/recv-$cc.out" 2>"$scratch/recv-$cc.err" &
  recv_pid=$!
  sleep 0.5
  local t0 t1 rc=0
  t0="$(now)"
  LONGHAUL_HOME="$tx_home" timeout "$timeout_s" "$bin" emu exec --id "$emu_pid" b -- \
    "$bin" send ${insecure[@]+"${insecure[@]}"} -C "$cc" -J --connect-timeout 10s "${set_names[@]}" "$addr_a" \
    >"$scratch/send-$cc.json" 2>"$scratch/send-$cc.err" || rc=$?
  t1="$(now)"
  if [ $rc -eq 124 ]; then
    kill "$recv_pid" 2>/dev/null; wait "$recv_pid" 2>/dev/null; recv_pid=""
    results+=("longhaul send -C $cc (sealed)|timeout after ${timeout_s} s|-")
    return
  fi
  [ $rc -eq 0 ] || die "longhaul send -C $cc failed ($rc): $(cat "$scratch/send-$cc.err")"
  wait "$recv_pid" || die "longhaul recv failed: $(cat "$scratch/recv-$cc.err")"
  recv_pid=""
  verify "$dst"
  local cipher
  cipher="$(sed -n 's/.*"cipher": *"\([^"]*\)".*/\1/p' "$scratch/send-$cc.json" | head -1)"
  if [ ${#insecure[@]} -gt 0 ]; then
    [ -z "$cipher" ] || die "longhaul send -C $cc --insecure reported cipher $cipher"
    cipher=plain
  fi
  [ -n "$cipher" ] || die "longhaul send -C $cc did not report a cipher: the transfer was not sealed"
  record "longhaul send -C $cc ($cipher)" "$t0" "$t1"
  rm -rf "$dst"
}

# TOOL CC: scp or rsync over ssh from B to A, with B's namespace defaulting to CC.
run_ssh() {
  local tool="$1" cc="$2" dst="$scratch/dst-$1-$2"
  on_b sysctl -q -w net.ipv4.tcp_congestion_control="$cc" >/dev/null ||
    die "cannot set net.ipv4.tcp_congestion_control=$cc in side B's namespace"
  local got
  got="$(on_b sysctl -n net.ipv4.tcp_congestion_control)"
  [ "$got" = "$cc" ] || die "side B's namespace uses $got, not $cc"
  on_a mkdir -p "$dst"
  # Which control the connection uses, sampled while it runs.
  (sleep 3; on_b ss -tin dst "$addr_a" >"$scratch/ss-$tool-$cc.txt" 2>&1) &
  local ss_pid=$!
  local t0 t1 rc=0
  t0="$(now)"
  case "$tool" in
    scp) timeout "$timeout_s" "$bin" emu exec --id "$emu_pid" b -- \
      scp -q "${ssh_opts[@]}" "${set_names[@]}" "root@$addr_a:$dst/" \
      2>"$scratch/$tool-$cc.err" || rc=$? ;;
    rsync) timeout "$timeout_s" "$bin" emu exec --id "$emu_pid" b -- \
      rsync -a -e "ssh ${ssh_opts[*]}" "${set_names[@]}" "root@$addr_a:$dst/" \
      2>"$scratch/$tool-$cc.err" || rc=$? ;;
  esac
  t1="$(now)"
  wait "$ss_pid" || true
  if [ $rc -eq 124 ]; then
    results+=("$tool, kernel $cc|timeout after ${timeout_s} s|-")
    on_a rm -rf "$dst"
    return
  fi
  [ $rc -eq 0 ] || die "$tool with $cc failed ($rc): $(cat "$scratch/$tool-$cc.err")"
  # A run shorter than the sample's delay has no sample; otherwise it must name the control.
  if grep -q "ESTAB" "$scratch/ss-$tool-$cc.txt" && ! grep -qw "$cc" "$scratch/ss-$tool-$cc.txt"; then
    die "$tool's connection did not use $cc: $(cat "$scratch/ss-$tool-$cc.txt")"
  fi
  verify "$dst"
  on_a rm -rf "$dst"
  record "$tool, kernel $cc" "$t0" "$t1"
}

record() {
  local what="$1" t0="$2" t1="$3"
  local secs goodput
  secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
  goodput="$(awk -v a="$t0" -v b="$t1" -v n="$total_bytes" 'BEGIN { printf "%.1f", n * 8 / (b - a) / 1e6 }')"
  results+=("$what|$secs s|$goodput Mb/s")
  echo "$what: $secs s, $goodput Mb/s" >&2
}

echo "path: $rate, $delay each way, $loss random loss, $queue-packet droptail queue; A=$addr_a (receiver), B=$addr_b (sender)" >&2
for r in $runs; do
  case "$r" in
    longhaul-*) run_longhaul "${r#longhaul-}" ;;
    scp-* | rsync-*) run_ssh "${r%%-*}" "${r#*-}" ;;
  esac
done

header="$files files, $((per_file * files)) MiB ($total_bytes bytes) in all; $rate, $delay each way, $loss random loss, $queue-packet queue (longhaul emu pair ${busy_poll[*]:-} ${coalesce[*]:-}); $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r), $(ssh -V 2>&1)"
{
  echo "$header"
  echo
  echo "| transfer | time to completion | goodput (file bytes) |"
  echo "|---|---|---|"
  for row in "${results[@]}"; do
    IFS='|' read -r a b c <<<"$row"
    echo "| $a | $b | $c |"
  done
} >"$scratch/table.md"
cat "$scratch/table.md"
[ -z "$md" ] || cp "$scratch/table.md" "$md"
