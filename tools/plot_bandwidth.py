#!/usr/bin/env python3
"""Plot a pagecheck bandwidth report: effective bandwidth against shape, one line per variant,
with the ceilings measured in the same run drawn as horizontal lines.

Usage: /usr/bin/python3 tools/plot_bandwidth.py REPORT.json OUT.svg
Needs matplotlib (Debian: python3-matplotlib). Exit status 2 on a bad report or arguments.
"""
import argparse
import json
import math
import os
import sys

SCHEMA = "pagecheck.bandwidth/1"


def load_report(path):
    """Reads and minimally checks a report; raises ValueError naming the problem."""
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    if not isinstance(report, dict) or report.get("schema") != SCHEMA:
        raise ValueError(f"not a {SCHEMA} report")
    for key in ("family", "variants", "results", "ceilings", "environment", "source_hash"):
        if key not in report:
            raise ValueError(f"missing field '{key}'")
    return report


def tick_label(shape):
    """The shape's label without its group's base ("mha", "gqa", "tokens") and suffix
    ("_nhd_e4m3", "_w128", ...), which the group's title already says."""
    group, label = shape["group"], shape["label"]
    base, _, suffix = group.partition("_")
    if suffix and label.endswith("_" + suffix):
        label = label[: -len(suffix) - 1]
    if label.startswith(base + "_"):
        label = label[len(base) + 1:]
    return label.replace("_", " ")


def series(report):
    """{group: (tick labels, {variant: [GB/s or nan]}, [(index, GB/s) above the ceiling])} in
    report order."""
    groups = {}
    for result in report["results"]:
        shape = result["shape"]
        ticks, values, above = groups.setdefault(
            shape["group"], ([], {v: [] for v in report["variants"]}, []))
        ticks.append(tick_label(shape))
        by_variant = {v["variant"]: v for v in result["variants"]}
        for variant in report["variants"]:
            v = by_variant.get(variant)
            ok = v is not None and v["status"] == "ok"
            values[variant].append(v["gbps"] if ok else math.nan)
            if ok and v.get("above_ceiling", False):
                above.append((len(ticks) - 1, v["gbps"]))
    return groups


def plot(report, out_path):
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "pagecheck"
    import matplotlib.pyplot as plt

    groups = series(report)
    if not groups:
        raise ValueError("the report has no results")
    family = report["family"]
    main_kind = "read" if family == "paged_attention" else "copy"
    ceilings = report["ceilings"]
    widest = max(len(ticks) for ticks, _, _ in groups.values())
    fig, axes = plt.subplots(len(groups), 1, figsize=(max(7.0, 0.42 * widest + 3.0),
                                                      3.8 * len(groups)), squeeze=False)
    for ax, (group, (ticks, values, above)) in zip(axes[:, 0], groups.items()):
        xs = list(range(len(ticks)))
        for variant, ys in values.items():
            ax.plot(xs, ys, marker="o", markersize=3.5, linewidth=1.4, label=variant)
        if above:  # a measurement above its ceiling: the byte count, caching or timing is wrong
            ax.scatter([x for x, _ in above], [y for _, y in above], marker="x", s=60,
                       color="red", zorder=5, label="ABOVE CEILING")
        for kind, style in (("copy", "--"), ("read", ":")):
            c = ceilings[kind]
            width = 2.0 if kind == main_kind else 1.0
            ax.axhline(c["gbps"], color="black" if kind == main_kind else "gray",
                       linestyle=style, linewidth=width,
                       label=f"{kind} ceiling {c['gbps']:.0f} GB/s")
        ax.set_xticks(xs)
        ax.set_xticklabels(ticks, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("effective GB/s")
        finite = [y for ys in values.values() for y in ys if not math.isnan(y)]
        top = max([ceilings["copy"]["gbps"], ceilings["read"]["gbps"]] + finite)
        ax.set_ylim(0, 1.1 * top if top > 0 else 1.0)
        ax.set_title(f"{family} [{group}]", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    env = report["environment"]
    fig.suptitle(f"{family} on {env['device']} (sources {report['source_hash'][:12]}, "
                 f"git {report.get('git_revision', '?')[:12]})", fontsize=10)
    fig.tight_layout()
    # A temporary beside the target, named like the C++ tools' (.NAME.PID.pagecheck-tmp, which
    # .gitignore covers), removed when the plot fails half-way.
    folder, name = os.path.split(os.path.abspath(out_path))
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.pagecheck-tmp")
    try:
        fig.savefig(tmp, format="svg", metadata={"Date": None})
        os.replace(tmp, out_path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.remove(tmp)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", help="bandwidth report JSON (pagecheck bench --json)")
    parser.add_argument("svg", help="output SVG file")
    args = parser.parse_args(argv)
    try:
        report = load_report(args.report)
    except (OSError, ValueError) as e:  # json.JSONDecodeError is a ValueError
        print(f"plot_bandwidth.py: {args.report}: {e}", file=sys.stderr)
        return 2
    try:
        plot(report, args.svg)
    except ImportError as e:
        print(f"plot_bandwidth.py: matplotlib is missing ({e}); install python3-matplotlib",
              file=sys.stderr)
        return 3
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"plot_bandwidth.py: {args.report}: cannot plot: {e!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
