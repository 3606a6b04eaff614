#!/usr/bin/env bash
# Would io_uring, MSG_ZEROCOPY or mmap make longhaul's I/O cheaper in CPU per byte on this
# machine? Builds the measuring tool in bench/io (a Cargo workspace of its own, outside the
# repository's, so its builds and CI never build it; release profile, its own target
# directory, which git ignores) and runs it once. Every case moves the same bytes:
#
#   - over loopback UDP between two threads, as 64 KiB GSO sends of 1,472-byte segments
#     (*-gso) or as 65,507-byte datagrams (*-64k), the receiver with UDP_GRO: sendmsg + recvmsg
#     (syscall-*, what crates/net/src/socket.rs does), io_uring SendMsg + RecvMsg with --depth
#     requests in flight per end (uring-*), sendmsg with MSG_ZEROCOPY and its completions read
#     from the error queue (zerocopy-*), io_uring SendMsgZc + RecvMsg (uring-zc-*);
#   - from a file the page cache holds, in 1 MiB chunks each hashed with BLAKE3 as the sender
#     does (crates/net/src/feed.rs): pread (read), io_uring Read with --read-depth reads in
#     flight (uring-read), mmap with MAP_POPULATE, --window-mb at a time (mmap).
#
# Prints, for each case, the median and best of the rounds (interleaved, so other load weighs
# on every case alike): Gb/s, the process's CPU seconds per GB and its threads' (getrusage),
# the host's busy seconds per GB (/proc/stat: also softirq work in ksoftirqd, and any other
# load), system calls per GB, and how many zero-copy sends the kernel copied after all.
# Loopback delivers to a local socket, so the kernel copies a zero-copy send's pages on
# delivery: what zero-copy saves on a real NIC cannot be measured here.
#
#   bench/io/run.sh [--size-mb N] [--rounds R] [--only LIST] [--depth D] [--read-depth D]
#                   [--window-mb W] [--dir DIR] [--md FILE]
#
# --size-mb: bytes per case (default 2048). --rounds: default 3. --only: a comma-separated
# subset of the cases named above (syscall-gso, uring-gso, zerocopy-gso, uring-zc-gso, the
# same with -64k, read, uring-read, mmap). --depth: default 8; --read-depth: default 4;
# --window-mb: default 64. --dir: where the file to read is made (default /tmp; it is removed
# on exit). --md: also write the summary and the table as markdown.
#
# Both cores are used: run it on an otherwise idle machine (it warns when the load average is
# over 1.5).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir=/tmp
args=()
tag=bench/io
# shellcheck source=../lib.sh
. "$here/../lib.sh"

while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --dir) [ $# -ge 2 ] || die "$1 needs a value"; dir="$2"; shift 2 ;;
    --size-mb | --rounds | --only | --depth | --read-depth | --window-mb | --md)
      [ $# -ge 2 ] || die "$1 needs a value"
      args+=("$1" "$2")
      shift 2
      ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

command -v cargo >/dev/null || die "cargo is missing"
nice cargo build --release --locked --quiet --manifest-path "$here/Cargo.toml" \
  --target-dir "$here/target" || die "building bench/io failed"

scratch="$(mktemp -d "$dir/longhaul-io.XXXXXX")" || die "cannot make a directory in $dir"
trap 'rm -rf "$scratch"' EXIT

load=$(cut -d' ' -f1 /proc/loadavg)
if (($(echo "$load > 1.5" | bc -l))); then
  echo "$tag: load average $load: other work on the machine will weigh on the numbers" >&2
fi
"$here/target/release/longhaul-bench-io" --file "$scratch/file.bin" ${args[@]+"${args[@]}"}
