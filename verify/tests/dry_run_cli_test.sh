#!/usr/bin/env bash
# CPU test of `pagecheck verify --dry-run [--json FILE]`: without a GPU it draws every case of
# the default run (200 per variant, seed 1), prints the edge-case histogram per variant and
# writes every case's spec (the --reproduce-spec form); the default run reaches the breadth
# edges of issue 13; the same seed draws the same cases; bad arguments are exit 2.
# A v1 plugin named by a bare file name is found in the current directory.
# Usage: dry_run_cli_test.sh PAGECHECK WORK_DIR V1_TEST_PLUGIN
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../tools/test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/test-lib.sh" || exit 1
start_cli_test "$1" "$2"
v1_plugin=$3

# --plugin with a bare file name loads ./NAME (dlopen alone would search the library path),
# and a version-1 plugin's variants are drawn under their translated declarations.
cp "$v1_plugin" libpc_dry_run_v1.so
expect 0 "dry run of a v1 plugin named by its bare file name" -- "$pagecheck" verify --dry-run \
  --plugin libpc_dry_run_v1.so --kernel paged_attention --variant v1_attention --cases 20
says "paged_attention/v1_attention [plugin]: 20 cases" "the plugin's variant"
rm -f libpc_dry_run_v1.so

# The simulated variants (every build has them): histogram, JSON, exit 0, no run folder.
expect 0 "dry run of the simulations" -- "$pagecheck" verify --simulate --dry-run --json sim.json
says "pagecheck verify --dry-run: seed 1, 200 cases per variant"
says "paged_attention/sim_reference [sim]: 200 cases"
says "edge cases: " "the histogram"
says "kv_row>1024=" "the histogram counts the wide cases"
[[ -z $(ls "$TMPDIR") ]] || fail "a dry run left a run folder: $(ls "$TMPDIR")"

# The built-in variants, where this build registers them (a CUDA build; no GPU needed).
if "$pagecheck" list --family paged_attention | grep -q v2_split; then
  expect 0 "dry run of the built-in variants" -- "$pagecheck" verify --dry-run --json builtin.json
  says "paged_attention/v2_split: 200 cases"
  says "gather_cached_kv/vectorized: 200 cases"
  json=builtin.json
else
  echo "note: no built-in variants in this build; checking the simulations' draws"
  json=sim.json
fi

# Required counts per family in the default run (issue 13: tags counted from --dry-run).
python3 - "$json" <<'EOF' || fail "the default run misses an edge (see above)"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "pagecheck.dry_run/1" and doc["cases"] == 200 and doc["seed"] == "1"
need = {
    "paged_attention": {"kv_row>512": 6, "kv_row>1024": 3, "group=npow2": 3, "group>=16": 2,
                        "mqa_heads>=64": 2, "table_stride>width": 5, "bound>max_ctx": 5,
                        "extreme_logits": 5},
    "gather_cached_kv": {"kv_row>1024": 3, "tokens>=1024": 3, "spread_blocks": 3,
                         "whole_block": 3},
    "reshape_and_cache": {"kv_row>1024": 3, "tokens>=1024": 3, "spread_blocks": 3,
                          "whole_block": 3},
}
bad = 0
seen = set()
for v in doc["variants"]:
    seen.add(v["family"])
    assert len(v["cases"]) == 200, v["variant"]
    counted = {}
    for c in v["cases"]:
        for t in c["tags"]:
            counted[t] = counted.get(t, 0) + 1
        assert c["spec"]["family"] == v["family"]
    assert counted == v["tags"], v["variant"] + ": the histogram disagrees with the cases"
    if v["family"] == "paged_attention":
        heads = [(c["spec"]["num_heads"], c["spec"]["num_kv_heads"]) for c in v["cases"]]
        groups = {h // kv for h, kv in heads}
        if not {3, 5, 6, 7} <= groups:
            print("FAIL:", v["variant"], "groups drawn:", sorted(groups)); bad += 1
        if not any(kv == 1 and h >= 64 for h, kv in heads):
            print("FAIL:", v["variant"], "no MQA case with 64+ query heads"); bad += 1
        if not any(c["spec"]["regime"] == "extreme" for c in v["cases"]):
            print("FAIL:", v["variant"], "no extreme case"); bad += 1
        # Split-K edges at the variant's declared partition sizes (256, 512, 1024 when it
        # declares none): each size drawn, eight cases in all.
        sizes = v["caps"]["partition_sizes"] or [256, 512, 1024]
        edges = {p: v["tags"].get("split_edge@%d" % p, 0) for p in sizes}
        if min(edges.values()) < 1 or sum(edges.values()) < 8:
            print("FAIL:", v["variant"], "split-K edges per partition size:", edges); bad += 1
        stray = [t for t in v["tags"] if t.startswith("split_edge@") and
                 int(t.split("@")[1]) not in sizes]
        if stray:
            print("FAIL:", v["variant"], "edges at undeclared partition sizes:", stray); bad += 1
    for tag, least in need.get(v["family"], {}).items():
        if v["tags"].get(tag, 0) < least:
            print("FAIL:", v["family"], v["variant"], tag, v["tags"].get(tag, 0), "<", least)
            bad += 1
    # The full-range regime: several cases where PC_CAP_FULL_RANGE is declared, none elsewhere.
    full = v["tags"].get("full_range", 0)
    if full != v["regimes"].get("full_range", 0):
        print("FAIL:", v["variant"], "full_range tag and regime counts differ"); bad += 1
    if "full_range" in v["caps"]["cap_names"] and full < 3:
        print("FAIL:", v["variant"], "declares full_range but drew", full, "such cases"); bad += 1
    if "full_range" not in v["caps"]["cap_names"] and full:
        print("FAIL:", v["variant"], "drew", full, "full_range cases without the cap"); bad += 1
assert seen == set(need), seen
sys.exit(1 if bad else 0)
EOF

# The simulations declare the vocabulary's features (sim_reference: every page layout, fp8
# caches, multi-token queries, sinks, windows, soft-caps, context 0) or none of them (the bug
# simulations): the default run reaches each declared feature's edges and never draws an
# undeclared one; split-K edges sit at the declared partition size (sim_partition_max_only: 256).
python3 - sim.json <<'EOF' || fail "the simulations' default run misses a feature edge (see above)"
import json, sys
doc = json.load(open(sys.argv[1]))
by_name = {v["variant"]: v for v in doc["variants"]}
need = {"cache=nhd": 10, "cache=hnd": 10, "kv=fp8_e4m3": 10, "kv=fp8_e5m2": 10,
        "scale=per_kv_head": 10, "combined_kv": 10, "q_len>1": 20, "q_len>rest": 5,
        "non_causal": 3, "sinks": 10, "window": 10, "window_block_edge": 2, "soft_cap": 10,
        "ctx=0": 10}
bad = 0
tags = by_name["sim_reference"]["tags"]
for tag, least in need.items():
    if tags.get(tag, 0) < least:
        print("FAIL: sim_reference", tag, tags.get(tag, 0), "<", least); bad += 1
plain = by_name["sim_context_off_by_one"]["tags"]
for tag in need:
    if tag in plain:
        print("FAIL: sim_context_off_by_one declares no", tag, "but drew it"); bad += 1
split = by_name["sim_partition_max_only"]
if split["caps"]["partition_sizes"] != [256] or split["tags"].get("split_edge@256", 0) < 3:
    print("FAIL: sim_partition_max_only: split edges at its partition size 256"); bad += 1
if any(t.startswith("split_edge@") and t != "split_edge@256" for t in split["tags"]):
    print("FAIL: sim_partition_max_only drew edges at undeclared sizes"); bad += 1
sys.exit(1 if bad else 0)
EOF

# A case's spec is what --reproduce-spec takes: it replays on a simulated variant.
python3 -c 'import json,sys; d=json.load(open("sim.json")); v=[v for v in d["variants"] if v["variant"]=="sim_reference"][0]; c=[c for c in v["cases"] if "table_stride>width" in c["tags"]][0]; print(json.dumps(c["spec"]))' >spec.json ||
  fail "no padded-table case among sim_reference's cases"
expect 0 "a drawn spec replays" -- "$pagecheck" verify --simulate --variant sim_reference \
  --reproduce-spec spec.json --artifacts "$work/replay"

# Same seed, same cases; another seed, other cases; a shard draws its share.
expect 0 "the same dry run again" -- "$pagecheck" verify --simulate --dry-run --json again.json
cmp -s sim.json again.json || fail "two dry runs of seed 1 differ"
expect 0 "seed 2" -- "$pagecheck" verify --simulate --dry-run --seed 2 --json seed2.json
cmp -s sim.json seed2.json && fail "seeds 1 and 2 drew the same cases"
expect 0 "shard 1/4" -- "$pagecheck" verify --simulate --dry-run --shard 1/4 --kernel paged_attention
says "paged_attention/sim_reference [sim]: 50 cases"
grep -q gather_cached_kv out.txt && fail "--kernel paged_attention listed gather variants"

# Bad arguments: exit 2, nothing written.
expect 2 "--dry-run with --junit" -- "$pagecheck" verify --simulate --dry-run --junit j.xml
expect 2 "--dry-run with --reproduce-spec" -- "$pagecheck" verify --simulate --dry-run \
  --reproduce-spec spec.json
expect 2 "--dry-run of an unknown variant" -- "$pagecheck" verify --simulate --dry-run \
  --variant no_such_variant
says "no_such_variant"
expect 2 "--dry-run --json into a missing folder" -- "$pagecheck" verify --simulate --dry-run \
  --json missing/dir/out.json
[[ -e j.xml || -e missing ]] && fail "a refused dry run wrote a file"

finish
