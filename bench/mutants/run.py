#!/usr/bin/env python3
"""Mutation testing of the congestion controllers and the sender's parts.

Each mutant in mutants.toml perturbs one rule or constant of a controller (crates/cc) or of the
sender's parts every transport shares (crates/cc/src/sender). For each, this script applies the
change to a scratch copy of the repository (target/mutants/tree, built into
target/mutants/target so the working tree and its build stay untouched), runs the mutant's tiers of tests in order, and records which
tier caught it: a tier catches a mutant when its tests fail (or run past three times their
unmutated time). A mutant that does not compile is "unviable" and left out of the score.

    bench/mutants/run.py                 every mutant, every tier; writes results.json and
                                         RESULTS.md beside this file
    bench/mutants/run.py --sample        the mutants marked `sample` (CI runs this): exits 1
                                         if one survives
    bench/mutants/run.py --only ID,ID    chosen mutants (results printed, not written)
    bench/mutants/run.py --only ID --update
                                         rerun chosen mutants and replace their rows in
                                         results.json and RESULTS.md (each row names the
                                         commit it ran at)
    bench/mutants/run.py --skip-tier reproduce
                                         leave out a tier (its six minutes per survivor)
    bench/mutants/run.py --sample --tiers vectors
                                         run these tiers instead of each mutant's own
    bench/mutants/run.py --check         only check that every `find` occurs once

The score is caught ÷ (caught + survived).
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SCRATCH = REPO / "target" / "mutants"
TREE = SCRATCH / "tree"
TARGET = SCRATCH / "target"


def load():
    with open(HERE / "mutants.toml", "rb") as f:
        doc = tomllib.load(f)
    tiers = doc["tiers"]
    mutants = doc["mutant"]
    ids = [m["id"] for m in mutants]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        sys.exit(f"mutants.toml: duplicate ids {sorted(dup)}")
    for m in mutants:
        for key in ("id", "kind", "file", "find", "replace", "why"):
            if key not in m:
                sys.exit(f"mutants.toml: mutant {m.get('id', '?')} has no `{key}`")
        if m["kind"] not in ("constant", "sign", "comparison", "branch"):
            sys.exit(f"mutants.toml: {m['id']}: unknown kind {m['kind']!r}")
        m.setdefault("tiers", default_tiers(m["file"]))
        for t in m["tiers"]:
            if t not in tiers:
                sys.exit(f"mutants.toml: {m['id']}: unknown tier {t!r}")
    return tiers, mutants


def default_tiers(file):
    if file.startswith("crates/proto/"):
        return ["proto", "transports", "reproduce"]
    if file.startswith("crates/cc/src/sender/"):
        # The sender's parts: their unit tests are cc's, the transport built on them is proto.
        return ["cc", "proto", "transports", "reproduce"]
    return ["cc", "transports", "reproduce"]


def check_finds(mutants, root):
    bad = []
    for m in mutants:
        text = (root / m["file"]).read_text()
        n = text.count(m["find"])
        if n != 1:
            bad.append(f"{m['id']}: `find` occurs {n} times in {m['file']}")
    return bad


def sync_tree():
    """Make the scratch tree the repository's tracked files (as in the working tree): rewrite
    only those whose content differs, so cargo rebuilds only what changed, and delete what the
    repository no longer has (a file moved into a directory, `a.rs` → `a/mod.rs`, would
    otherwise leave both and the tree would not build)."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True
    ).stdout.split(b"\0")
    kept = set()
    for raw in files:
        if not raw:
            continue
        rel = raw.decode()
        src = REPO / rel
        if not src.is_file():
            continue
        kept.add(rel)
        dst = TREE / rel
        data = src.read_bytes()
        if dst.is_file() and dst.read_bytes() == data:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
        shutil.copymode(src, dst)
    if not TREE.is_dir():
        return
    for path in sorted(TREE.rglob("*"), reverse=True):
        rel = path.relative_to(TREE).as_posix()
        if path.is_file() and rel not in kept:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def cargo(command, timeout=None):
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET), CARGO_TERM_COLOR="never")
    start = time.monotonic()
    try:
        p = subprocess.run(
            command,
            cwd=TREE,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
        return p.returncode, time.monotonic() - start, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start, ""


def failing_tests(output):
    """The names cargo lists under `failures:` (to say what caught a mutant)."""
    names, inside = [], False
    for line in output.splitlines():
        if line.strip() == "failures:":
            inside = True
            continue
        if inside:
            s = line.strip()
            if not s:
                if names:
                    inside = False
                continue
            if s.startswith("test result") or s.startswith("----"):
                inside = False
                continue
            names.append(s)
    return names[:3]


def baseline(tiers, needed):
    times = {}
    for name in needed:
        cmd = tiers[name]["command"]
        print(f"baseline {name}: building …", flush=True)
        rc, _, out = cargo(cmd + ["--no-run"])
        if rc != 0:
            sys.exit(f"the unmutated tree does not build for tier {name}:\n{out[-3000:]}")
        rc, secs, out = cargo(cmd)
        if rc != 0:
            sys.exit(
                f"tier {name} fails without a mutant; fix the tests first:\n{out[-3000:]}"
            )
        times[name] = secs
        print(f"baseline {name}: passes in {secs:.0f} s", flush=True)
    return times


def run_mutant(m, tiers, skip, base_times):
    path = TREE / m["file"]
    original = path.read_text()
    path.write_text(original.replace(m["find"], m["replace"], 1))
    result = {"outcome": "survived", "caught_by": None, "tests": [], "seconds": 0.0}
    try:
        for name in m["tiers"]:
            if name in skip:
                continue
            cmd = tiers[name]["command"]
            rc, secs, out = cargo(cmd + ["--no-run"])
            result["seconds"] += secs
            if rc != 0:
                result["outcome"] = "unviable"
                result["tests"] = [out.strip().splitlines()[-1] if out.strip() else ""]
                return result
            limit = 3 * base_times[name] + 30
            rc, secs, out = cargo(cmd, timeout=limit)
            result["seconds"] += secs
            if rc is None:
                result.update(outcome="caught", caught_by=name, tests=["timeout"])
                return result
            if rc != 0:
                result.update(outcome="caught", caught_by=name, tests=failing_tests(out))
                return result
        return result
    finally:
        path.write_text(original)


def score(results):
    caught = sum(r["outcome"] == "caught" for r in results)
    survived = sum(r["outcome"] == "survived" for r in results)
    return caught, survived, (caught / (caught + survived) if caught + survived else 1.0)


def commit():
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=REPO,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return head + ("+changes" if dirty else "")


def write_reports(tiers, results, base_times, skip, started, built_from, previous=None):
    caught, survived, s = score(results)
    doc = {
        "date": started.date().isoformat(),
        "commit": built_from,
        "machine": f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs",
        "command": "bench/mutants/run.py" + ("".join(f" --skip-tier {t}" for t in sorted(skip))),
        "tiers": {k: {"about": tiers[k]["about"], "baseline_s": round(v, 1)} for k, v in base_times.items()},
        "caught": caught,
        "survived": survived,
        "unviable": sum(r["outcome"] == "unviable" for r in results),
        "score": round(s, 4),
        "mutants": results,
    }
    if previous:
        for key in ("date", "commit", "machine", "command", "tiers"):
            doc[key] = previous[key]
    (HERE / "results.json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = [
        "# Mutation score",
        "",
        f"Written by `{doc['command']}` on {doc['date']}, commit {doc['commit']}, "
        f"{doc['machine']}. Rerun the same command to refresh; `mutants.toml` lists the mutants."
        + (" Rows rerun since (`--only ID --update`) name their own commit." if any("commit" in r for r in results) else ""),
        "",
        f"**{caught} of {caught + survived} mutants caught ({100 * s:.1f} %)**"
        + (f"; {doc['unviable']} did not compile" if doc["unviable"] else "")
        + ".",
        "",
        "| tier | catches | baseline |",
        "|---|---|---|",
    ]
    for k, v in base_times.items():
        n = sum(r["caught_by"] == k for r in results)
        lines.append(f"| {k}: {tiers[k]['about']} | {n} | {v:.0f} s |")
    lines += ["", "| mutant | kind | change | outcome | caught by |", "|---|---|---|---|---|"]
    for r in results:
        by = r["caught_by"] or ""
        if r["tests"] and r["outcome"] == "caught":
            by += ": " + ", ".join(f"`{t}`" for t in r["tests"][:2])
        if "commit" in r:
            by += f" (at {r['commit']})"
        lines.append(f"| {r['id']} | {r['kind']} | {r['why']} | {r['outcome']} | {by} |")
    survivors = [r for r in results if r["outcome"] == "survived"]
    if survivors:
        lines += ["", "## Survivors", ""]
        for r in survivors:
            lines.append(f"- **{r['id']}** ({r['why']}): {r.get('justify', 'not yet explained')}")
    (HERE / "RESULTS.md").write_text("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", action="store_true", help="only the mutants marked sample")
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--skip-tier", action="append", default=[], help="leave out a tier")
    ap.add_argument("--tiers", help="comma-separated tiers to run instead of each mutant's own")
    ap.add_argument("--update", action="store_true", help="with --only: replace those rows in the results")
    ap.add_argument("--check", action="store_true", help="check the finds and stop")
    args = ap.parse_args()

    tiers, mutants = load()
    bad = check_finds(mutants, REPO)
    if bad:
        sys.exit("mutants.toml no longer matches the code:\n  " + "\n  ".join(bad))
    if args.check:
        print(f"{len(mutants)} mutants, each `find` occurs once")
        return
    for t in args.skip_tier:
        if t not in tiers:
            sys.exit(f"--skip-tier: unknown tier {t!r} (tiers: {', '.join(tiers)})")
    skip = set(args.skip_tier)
    if args.tiers:
        override = args.tiers.split(",")
        unknown = [t for t in override if t not in tiers]
        if unknown:
            sys.exit(f"--tiers: unknown tiers {unknown} (tiers: {', '.join(tiers)})")
        for m in mutants:
            m["tiers"] = override
    chosen = mutants
    if args.sample:
        chosen = [m for m in mutants if m.get("sample")]
    if args.only:
        want = args.only.split(",")
        unknown = [w for w in want if w not in {m["id"] for m in mutants}]
        if unknown:
            sys.exit(f"--only: unknown mutant ids {unknown}")
        chosen = [m for m in mutants if m["id"] in want]

    started = datetime.datetime.now(datetime.timezone.utc)
    built_from = commit()
    TREE.mkdir(parents=True, exist_ok=True)
    sync_tree()
    needed = []
    for m in chosen:
        for t in m["tiers"]:
            if t not in skip and t not in needed:
                needed.append(t)
    order = list(tiers)
    needed.sort(key=order.index)
    base_times = baseline(tiers, needed)

    results = []
    for i, m in enumerate(chosen, 1):
        r = run_mutant(m, tiers, skip, base_times)
        entry = {k: m[k] for k in ("id", "kind", "file", "why")}
        if "justify" in m:
            entry["justify"] = m["justify"]
        entry.update(r)
        entry["seconds"] = round(entry["seconds"], 1)
        results.append(entry)
        by = f" by {r['caught_by']}" if r["caught_by"] else ""
        print(f"[{i}/{len(chosen)}] {m['id']}: {r['outcome']}{by} ({r['seconds']:.0f} s)", flush=True)

    if args.update:
        if not args.only:
            sys.exit("--update needs --only")
        previous = json.loads((HERE / "results.json").read_text())
        fresh = {r["id"]: dict(r, commit=built_from) for r in results}
        merged = [fresh.get(r["id"], r) for r in previous["mutants"]]
        known = {r["id"] for r in merged}
        merged += [r for r in fresh.values() if r["id"] not in known]
        base = {k: v["baseline_s"] for k, v in previous["tiers"].items()}
        write_reports(tiers, merged, base, skip, started, built_from, previous)
        results = merged
        print(f"updated {HERE / 'RESULTS.md'} and results.json")
    caught, survived, s = score(results)
    print(f"score: {caught} of {caught + survived} caught ({100 * s:.1f} %)")
    for r in results:
        if r["outcome"] == "survived":
            print(f"  survived: {r['id']} ({r['why']})")
    if not args.sample and not args.only and not args.tiers:
        write_reports(tiers, results, base_times, skip, started, built_from)
        print(f"wrote {HERE / 'RESULTS.md'} and results.json")
    if args.sample and survived:
        sys.exit(1)


if __name__ == "__main__":
    main()
