"""The pandas and xarray recipes of docs/sweep.md, run on a collected sweep directory.

    python3 sweep_pandas.py DIR

Loads DIR/results.csv and DIR/results-long.csv with pandas, builds the xarray DataArrays the
docs show, checks that every route gives the same numbers as the CSV read by Python's own csv
module, and prints what it loaded as JSON for crates/cli/tests/sweep_pandas.rs to compare with
the run files. Exits 77 when pandas or xarray is not installed.
"""

import csv
import json
import math
import sys

try:
    import pandas as pd
    import xarray as xr
except ImportError as e:
    print(f"sweep_pandas.py: {e}", file=sys.stderr)
    sys.exit(77)

d = sys.argv[1]

# The recipes, as in docs/sweep.md.
df = pd.read_csv(f"{d}/results.csv", float_precision="round_trip")
long = pd.read_csv(f"{d}/results-long.csv", float_precision="round_trip")
axes = list(long.columns[1 : long.columns.get_loc("flow")])
wide = long.pivot_table(index=["index", "flow"], columns="metric", values="value", dropna=False)
tput = df.set_index(axes + ["flow"])["throughput_bps"].to_xarray()
cube = long.set_index(axes + ["flow", "metric"])["value"].to_xarray()

# The same numbers by every route.
with open(f"{d}/results.csv", newline="") as f:
    rows = list(csv.DictReader(f))
assert len(rows) == len(df) > 0, (len(rows), len(df))
metrics = sorted(set(long["metric"]))
assert "throughput_bps" in metrics and "link_bottleneck_utilization" in metrics, metrics
checked = 0
for r in rows:
    key = {a: df[a].dtype.type(r[a]) for a in axes}
    flow = int(r["flow"])
    for m in metrics:
        want = float(r[m]) if r[m] != "" else math.nan
        got = [
            float(df.loc[(df["index"] == int(r["index"])) & (df["flow"] == flow), m].iloc[0]),
            float(wide.loc[(int(r["index"]), flow), m]),
            float(cube.sel(**key, flow=flow, metric=m)),
        ]
        for g in got:
            assert g == want or (math.isnan(g) and math.isnan(want)), (r["index"], m, want, got)
        checked += 1
    assert float(tput.sel(**key, flow=flow)) == float(r["throughput_bps"])

print(
    json.dumps(
        {
            "rows": len(df),
            "long_rows": len(long),
            "checked": checked,
            "dims": list(tput.dims),
            "shape": list(tput.shape),
            "throughput": [
                {**{a: (v.item() if hasattr(v, "item") else v) for a, v in zip(tput.dims, c)},
                 "value": float(tput.sel(dict(zip(tput.dims, c))))}
                for c in [
                    tuple(x)
                    for x in pd.MultiIndex.from_product([tput[dim].values for dim in tput.dims])
                ]
            ],
        }
    )
)
