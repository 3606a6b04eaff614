#!/usr/bin/env bash
# Many small files on loopback: one tree of --files files of --size bytes each (default 10,000
# of 1 KiB, incompressible) moved into a fresh directory on the same host by `longhaul send`
# (authenticated and sealed, into `longhaul recv`), by `tar c | ssh host tar x` and by
# `rsync -a` over ssh, both into an sshd of the script's own on 127.0.0.1. Prints one table
# (seconds and files per second for each, the best of --runs runs) and writes it as markdown.
#
#   bench/transfer/small-files.sh [--files N] [--size BYTES] [--runs R] [--md FILE] [--bin PATH]
#                                 [--dir DIR]
#
# --dir: where the source tree and the destinations go (default: a new directory under /tmp);
# every destination is on that one file system, and each run starts from an empty directory.
# Needs the longhaul binary (default target/release/longhaul; `--bin target/ci/longhaul` for
# the CI build), and ssh, sshd, tar and rsync (scripts/setup.sh installs them). sshd runs as
# the invoking user on a free port with host and client keys made for the run; the machine's
# ssh setup is neither used nor changed. longhaul's ends use key pairs made for the run too.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$root/target/release/longhaul"
files=10000
size=1024
runs=1
md=""
base=""

tag=bench/transfer/small-files
# shellcheck source=../lib.sh
. "$here/../lib.sh"

while [ $# -gt 0 ]; do
  case "$1" in
    --files) files="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --md) md="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --dir) base="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

[ -x "$bin" ] || die "no longhaul binary at $bin; build it with: cargo build --release -p longhaul"
for t in ssh ssh-keygen rsync tar python3; do
  command -v "$t" >/dev/null || die "$t is missing; run scripts/setup.sh"
done
[ -x /usr/sbin/sshd ] || die "/usr/sbin/sshd is missing; run scripts/setup.sh"

if [ -n "$base" ]; then
  mkdir -p "$base"
  scratch="$(mktemp -d "$base/lh-small-files.XXXXXX")"
else
  scratch="$(mktemp -d /tmp/lh-small-files.XXXXXX)"
fi
sshd_pid=""
recv_pid=""
cleanup() {
  local rc=$?
  set +e
  [ -n "$recv_pid" ] && kill "$recv_pid" 2>/dev/null && wait "$recv_pid" 2>/dev/null
  [ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null && wait "$sshd_pid" 2>/dev/null
  if [ $rc -eq 0 ]; then
    rm -rf "$scratch"
  else
    echo "$tag: failed; logs kept in $scratch" >&2
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The tree: incompressible bytes, the same for every run.
src="$scratch/src/tree"
mkdir -p "$src"
echo "making $files files of $size bytes in $src" >&2
python3 - "$src" "$files" "$size" <<'PY'
import os, sys
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    with open(os.path.join(d, f"f{i:06d}"), "wb") as f:
        f.write(os.urandom(size))
PY

# sshd on 127.0.0.1 with keys of its own.
sshdir="$scratch/ssh"
mkdir -p "$sshdir"
ssh-keygen -q -t ed25519 -N "" -f "$sshdir/host"
ssh-keygen -q -t ed25519 -N "" -f "$sshdir/client"
cp "$sshdir/client.pub" "$sshdir/authorized_keys"
ssh_port="$(free_port)"
sshd_config "$sshdir" "ListenAddress 127.0.0.1:$ssh_port" >"$sshdir/sshd_config"
[ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd
/usr/sbin/sshd -D -e -f "$sshdir/sshd_config" 2>"$sshdir/sshd.log" &
sshd_pid=$!
ssh_opts=(-F /dev/null -p "$ssh_port" -i "$sshdir/client" -o IdentitiesOnly=yes
  -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes
  -o ConnectTimeout=30 -o LogLevel=ERROR)
user="$(id -un)"
for _ in $(seq 1 300); do
  ssh "${ssh_opts[@]}" "$user@127.0.0.1" true 2>/dev/null && break
  kill -0 "$sshd_pid" 2>/dev/null || die "sshd exited: $(cat "$sshdir/sshd.log")"
  sleep 0.1
done
ssh "${ssh_opts[@]}" "$user@127.0.0.1" true || die "ssh into 127.0.0.1:$ssh_port failed: $(cat "$sshdir/sshd.log")"

# longhaul's keys: a pair for each end, the sender's authorized on the receiver.
rx_home="$scratch/rx-home"
tx_home="$scratch/tx-home"
make_keys "$bin" "$rx_home" "$tx_home"

# Checks that DIR/tree holds the whole tree, byte for byte.
verify() {
  diff -r "$src" "$1/tree" >/dev/null || die "the tree arrived damaged or incomplete in $1"
}

now() { date +%s.%N; }
best=()

# WHAT: one run of the transfer named WHAT into a fresh directory; prints its seconds.
run_once() {
  local what="$1" dst="$scratch/dst" t0 t1 rc=0
  rm -rf "$dst"
  mkdir -p "$dst"
  case "$what" in
    longhaul)
      local port
      port="$(free_port)"
      LONGHAUL_HOME="$rx_home" "$bin" recv -B 127.0.0.1 -p "$port" -n 1 -d "$dst" \
        >"$scratch/recv.out" 2>"$scratch/recv.err" &
      recv_pid=$!
      sleep 0.5
      t0="$(now)"
      LONGHAUL_HOME="$tx_home" "$bin" send -J --connect-timeout 10s "$src" "127.0.0.1:$port" \
        >"$scratch/send.json" 2>"$scratch/send.err" || rc=$?
      t1="$(now)"
      [ $rc -eq 0 ] || die "longhaul send failed ($rc): $(tail -5 "$scratch/send.err")"
      wait "$recv_pid" || die "longhaul recv failed: $(tail -5 "$scratch/recv.err")"
      recv_pid=""
      grep -q '"cipher": *"' "$scratch/send.json" || die "longhaul send reported no cipher: the transfer was not sealed"
      ;;
    tar)
      t0="$(now)"
      tar -C "$scratch/src" -cf - tree | ssh "${ssh_opts[@]}" "$user@127.0.0.1" tar -C "$dst" -xf - \
        2>"$scratch/tar.err" || rc=$?
      t1="$(now)"
      [ $rc -eq 0 ] || die "tar | ssh tar failed ($rc): $(cat "$scratch/tar.err")"
      ;;
    rsync)
      t0="$(now)"
      rsync -a -e "ssh ${ssh_opts[*]}" "$src" "$user@127.0.0.1:$dst/" 2>"$scratch/rsync.err" || rc=$?
      t1="$(now)"
      [ $rc -eq 0 ] || die "rsync failed ($rc): $(cat "$scratch/rsync.err")"
      ;;
  esac
  verify "$dst"
  rm -rf "$dst"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

for what in longhaul tar rsync; do
  low=""
  for r in $(seq 1 "$runs"); do
    secs="$(run_once "$what")"
    echo "$what run $r: $secs s, $(awk -v s="$secs" -v n="$files" 'BEGIN { printf "%.0f", n / s }') files/s" >&2
    if [ -z "$low" ] || awk -v a="$secs" -v b="$low" 'BEGIN { exit !(a < b) }'; then low="$secs"; fi
  done
  best+=("$what|$low")
done

label() {
  case "$1" in
    longhaul) echo "longhaul send (sealed) → longhaul recv" ;;
    tar) echo "tar c \| ssh tar x" ;;
    rsync) echo "rsync -a over ssh" ;;
  esac
}
{
  echo "$files files of $size bytes on loopback (127.0.0.1), best of $runs; $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r), $(ssh -V 2>&1), $(rsync --version | head -1)"
  echo
  echo "| transfer | time to completion | files/s |"
  echo "|---|---|---|"
  for row in "${best[@]}"; do
    IFS='|' read -r what secs <<<"$row"
    echo "| $(label "$what") | $secs s | $(awk -v s="$secs" -v n="$files" 'BEGIN { printf "%.0f", n / s }') |"
  done
} >"$scratch/table.md"
cat "$scratch/table.md"
[ -z "$md" ] || cp "$scratch/table.md" "$md"
