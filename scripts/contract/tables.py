#!/usr/bin/env python3
"""The tables of docs/contract.md from the JSON that `baton contract sweep
--json` wrote (scripts/contract/grid.sh writes them all into one folder).

    python3 scripts/contract/tables.py DIR
"""
import json
import os
import sys


def est(e, d=2):
    if e["samples"] == 0:
        return "-"
    if e["interval"] is None:
        return f"{e['mean']:.{d}f}"
    lo, hi = e["interval"]
    return f"{e['mean']:.{d}f} ± {(hi - lo) / 2:.{d}f}"


def sla(side, k=3.0):
    return next(e for f, e in side["sla_violations"] if f == k)


def load(d, name):
    path = os.path.join(d, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def main_table(s):
    print(f"### {s['topology']}: every failure, seeds {s['seeds'][0]}-{s['seeds'][-1]}\n")
    for sm in s["summaries"]:
        c, n = sm["contract"], sm["no_coordination"]
        print(f"{sm['scenario']} ({sm['failures']} failures per seed):\n")
        print("| | CONTRACT | No Coordination |")
        print("|---|---:|---:|")
        rows = [
            ("Loss-Num", est(c["loss_num"]), est(n["loss_num"])),
            ("Loss-Num, smallest - largest of a run", "%d - %d" % tuple(c["loss_num_range"]), "%d - %d" % tuple(n["loss_num_range"])),
            ("... lost to congestion", est(c["lost_to_congestion"]), est(n["lost_to_congestion"])),
            ("... lost for want of a route", est(c["lost_to_routing"]), est(n["lost_to_routing"])),
        ]
        for (k, ce), (_, ne) in zip(c["sla_violations"], n["sla_violations"]):
            rows.append((f"SLA-V, delay over {k:g}x", est(ce, 3), est(ne, 3)))
        rows += [
            ("malicious flows leaked", est(c["malicious_leaked"]), est(n["malicious_leaked"])),
            ("LSAs delivered", est(c["lsas"], 0), est(n["lsas"], 0)),
            ("CONTRACT messages", est(c["contract_messages"], 0), "-"),
            ("states approved", est(c["approvals"]), "-"),
            ("last approval after the failure, ms", est(c["approved_after_ms"], 0), "-"),
            ("controller time per run, ms (measured)", est(c["controller_ms"], 0), "-"),
        ]
        for r in rows:
            print("| %s | %s | %s |" % r)
        print(f"\nLoss-Num, CONTRACT minus No Coordination, paired by seed: {est(sm['loss_num_difference'])}\n")
        kind = "Link" if sm["scenario"] == "link-failure" else "Node"
        runs = [r for r in s["runs"] if kind in r["failure"]]
        leaky = [r for r in runs if r["no_coordination"]["malicious_leaked"] > 0]
        if leaky:
            mean = lambda xs: sum(xs) / len(xs)
            nc = [r["no_coordination"]["loss_num"] for r in leaky]
            c = [r["contract"]["loss_num"] for r in leaky]
            print(f"In the {len(leaky)} of {len(runs)} runs where No Coordination leaked an attack "
                  f"(the thesis's \"with leaking malicious flows\"): Loss-Num {mean(c):.1f} "
                  f"({min(c)}-{max(c)}) under CONTRACT against {mean(nc):.1f} ({min(nc)}-{max(nc)}).\n")


def grid_row(label, s):
    sm = s["summaries"][0]
    c, n = sm["contract"], sm["no_coordination"]
    rng = lambda x: "%d-%d" % tuple(x["loss_num_range"])
    return "| %s | %s (%s) | %s (%s) | %s | %s | %s | %s | %s | %s |" % (
        label,
        est(c["loss_num"]), rng(c),
        est(n["loss_num"]), rng(n),
        est(sm["loss_num_difference"]),
        est(sla(c), 3), est(sla(n), 3),
        est(c["malicious_leaked"]), est(n["malicious_leaked"]),
        est(c["approved_after_ms"], 0),
    )


GRID = [
    ("average flow rate (load)", [("4%", "default"), ("1%", "load-0.01"), ("2%", "load-0.02"), ("10%", "load-0.1")]),
    ("Pareto K", [("10", "default"), ("1.1", "k-1.1"), ("2", "k-2"), ("4", "k-4")]),
    ("noise of the traffic matrix", [("5%", "default"), ("10%", "noise-0.1"), ("50%", "noise-0.5"), ("100%", "noise-1.0")]),
    ("optimisation budget", [("none", "budget-0"), ("1 s", "budget-1000"), ("2 s", "default"), ("5 s", "budget-5000"), ("8 s", "budget-8000")]),
    ("IGP hold-down", [("0 s", "hold-0"), ("0.25 s", "hold-250"), ("0.5 s", "hold-500"), ("1 s", "default"), ("2 s", "hold-2000")]),
    ("optimiser", [("simplex", "default"), ("local search", "optimiser-local")]),
]


def grid(d):
    print("| setting | CONTRACT Loss-Num (min-max) | No Coord. Loss-Num (min-max) | difference | SLA-V 3x CONTRACT | SLA-V 3x No Coord. | leaked CONTRACT | leaked No Coord. | last approval, ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for title, points in GRID:
        for label, name in points:
            s = load(d, name)
            if s:
                print(grid_row(f"{title}: {label}", s))
    print()


def sla_curves(d):
    """SLA-V at every threshold for the thesis's Fig. 5.6 (load 2% and
    10%) and Fig. 5.7 (K 2 and 10)."""
    points = [("load 2%", "load-0.02"), ("load 10%", "load-0.1"), ("K 2", "k-2"), ("K 10 (default)", "default")]
    got = [(label, load(d, name)) for label, name in points]
    got = [(label, s) for label, s in got if s]
    if not got:
        return
    factors = [k for k, _ in got[0][1]["summaries"][0]["contract"]["sla_violations"]]
    print("| threshold | " + " | ".join(f"{l} CONTRACT | {l} No Coord." for l, _ in got) + " |")
    print("|---:|" + "---:|" * (2 * len(got)))
    for i, k in enumerate(factors):
        cells = []
        for _, s in got:
            sm = s["summaries"][0]
            cells.append(est(sm["contract"]["sla_violations"][i][1], 3))
            cells.append(est(sm["no_coordination"]["sla_violations"][i][1], 3))
        print(f"| {k:g}x | " + " | ".join(cells) + " |")
    print()


def toggles(d):
    print("| hold-down | toggles/s | approvals | CONTRACT Loss-Num | No Coord. Loss-Num | difference | SLA-V 3x CONTRACT | SLA-V 3x No Coord. | LSAs | CONTRACT messages |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for hold, prefix, periods in [("1 s", "toggle", [20, 100, 150, 200, 400]), ("0.1 s", "fast-toggle", [20, 100, 200, 400, 1000])]:
        for ms in periods:
            s = load(d, f"{prefix}-{ms}")
            if not s:
                continue
            sm = s["summaries"][0]
            c, n = sm["contract"], sm["no_coordination"]
            print("| %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                hold, 1000 / ms, est(c["approvals"]), est(c["loss_num"]), est(n["loss_num"]),
                est(sm["loss_num_difference"]), est(sla(c), 3), est(sla(n), 3),
                est(c["lsas"], 0), est(c["contract_messages"], 0)))
    print()


def sizes(d):
    print("| topology | routers | links | approval DAG per run, ms | approval requests per failure | last approval after the failure, ms | optimisation per change, ms | ms per weight evaluation | LSAs per failure | CONTRACT messages per failure | Loss-Num CONTRACT / No Coord. |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in ["default", "size-brain", "size-north-america", "size-south-america"]:
        s = load(d, name)
        if not s:
            continue
        runs = [r["contract"] for r in s["runs"]]
        appr = sum(r["controller_us"][1] for r in runs) / max(1, sum(r["dag_runs"][1] for r in runs)) / 1e3
        opt_runs = sum(r["dag_runs"][0] for r in runs)
        opt = sum(r["controller_us"][0] for r in runs) / max(1, opt_runs) / 1e3
        evals = s["params"]["budget_us"] * s["params"]["evaluations_per_s"] / 1e6
        reqs = sum(r["approval_requests"] for r in runs) / len(runs)
        after = [r["approved_after_us"] / 1e3 for r in runs if r["approved_after_us"] is not None]
        lsas = sum(r["lsas"] for r in runs) / len(runs)
        msgs = sum(r["approval_requests"] + r["approval_messages"] + r["filter_configs"] + r["weight_pushes"] for r in runs) / len(runs)
        ln_c = sum(r["loss_num"] for r in runs) / len(runs)
        ln_n = sum(r["no_coordination"]["loss_num"] for r in s["runs"]) / len(runs)
        print("| %s | %d | %d | %.2f | %.0f | %s | %s | %s | %.0f | %.0f | %.1f / %.1f |" % (
            s["topology"], s["size"][0], s["size"][1], appr, reqs,
            "%.0f" % (sum(after) / len(after)) if after else "-",
            "%.0f" % opt if opt_runs else "-",
            "%.2f" % (opt / evals) if opt_runs and evals else "-",
            lsas, msgs, ln_c, ln_n))
    print()


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    if load(d, "main"):
        main_table(load(d, "main"))
    print("### One setting at a time\n")
    grid(d)
    print("### SLA-V against its threshold\n")
    sla_curves(d)
    print("### Change frequency\n")
    toggles(d)
    print("### Network size\n")
    sizes(d)
