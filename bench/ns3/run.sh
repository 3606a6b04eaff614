#!/usr/bin/env bash
# Build the ns-3 dumbbell program (if libns3-dev is installed) and run the simulator benchmark,
# which runs both on the same scenario and prints the speed ratio.
#
#   bench/ns3/run.sh            build if ns-3 is present, then benchmark
#   bench/ns3/run.sh --install  apt-get install libns3-dev first (large: ~1 GB with deps)
#
# libns3-dev is deliberately not in scripts/packages.txt.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ "${1:-}" == "--install" ]]; then
    apt-get update && apt-get install -y libns3-dev
fi
mods="ns3-core ns3-network ns3-internet ns3-point-to-point ns3-point-to-point-layout ns3-applications ns3-traffic-control"
if pkg-config --exists $mods 2>/dev/null; then
    # Debian's .pc files carry a stray "-I/usr\;" entry; drop it.
    flags=""
    for f in $(pkg-config --cflags --libs $mods | sed 's#-I/usr\\;##g'); do
        # ...and absolute library paths of -dev packages that are not installed (libgsl.so);
        # the ns-3 libraries already link their runtime versions.
        if [[ "$f" == /*.so && ! -e "$f" ]]; then continue; fi
        flags+=" $f"
    done
    echo "building $here/dumbbell (ns-3 $(pkg-config --modversion ns3-core))"
    g++ -O2 -std=c++17 -o "$here/dumbbell" "$here/dumbbell.cc" $flags
else
    echo "ns-3 not found (pkg-config $mods); benchmarking longhaul-sim alone." >&2
    echo "Install it with: $0 --install" >&2
fi
cd "$root"
cargo bench -p longhaul-sim --bench dumbbell -- "$@"
