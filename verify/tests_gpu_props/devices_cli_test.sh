#!/usr/bin/env bash
# CPU test of issue 19's `verify --devices` and `verify merge` checks, through the CPU
# simulations (--simulated-devices pretends a device count): a run over two devices reports
# per device and merges to a one-device run of the same seed, case for case; one device listed
# behaves as without --devices; device lists are checked (exit 2); no device is a clear
# message (exit 3); merge refuses shards of other seeds, case counts or pagecheck versions,
# naming the file and the field (exit 2).  Usage: devices_cli_test.sh PAGECHECK WORK_DIR
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../tools/test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/test-lib.sh" || exit 1
pagecheck=$1
enter_work_dir "$2"
base=(verify --simulate --jobs 2 --shrink-budget 5)
run=("${base[@]}" --variant sim_reference --cases 24 --seed 5)

# 1. Two devices: per-device table and counts; the merged variants equal a one-device run
# (every count of a passing variant; the first failing case of a failing one).
expect 0 "--devices all over 2 simulated devices" -- "$pagecheck" "${run[@]}" \
  --simulated-devices 2 --devices all --json two.json
says "per device" "a per-device table"
says "over 2 devices"
expect 0 "--devices 0 (one device)" -- "$pagecheck" "${run[@]}" --simulated-devices 2 \
  --devices 0 --json one.json
grep -qF "per device" out.txt && fail "a one-device run printed a per-device table"
expect 0 "without --devices" -- "$pagecheck" "${run[@]}" --json plain.json
bug=("${base[@]}" --variant sim_scale_twice --cases 24 --seed 5)
expect 1 "a bug over 2 devices" -- "$pagecheck" "${bug[@]}" --simulated-devices 2 \
  --devices 0,1 --json bug2.json
expect 1 "the bug on one device" -- "$pagecheck" "${bug[@]}" --json bug1.json
/usr/bin/python3 - two.json one.json plain.json bug2.json bug1.json <<'PY' || fail "reports differ"
import json, sys
two, one, plain, bug2, bug1 = (json.load(open(f)) for f in sys.argv[1:])
keys = ("variant", "planned", "run", "passed", "failed", "not_supported", "errors", "regimes",
        "tags", "outcomes", "runs_twice", "max_ratio", "max_abs")
def counts(r):
    return [[v[k] for k in keys] for v in r["variants"]]
assert counts(two) == counts(one) == counts(plain), "merged counts differ from a one-device run"
assert len(two["devices"]) == 2, two["devices"]
assert [d["index"] for d in two["devices"]] == [0, 1]
ran = sum(v["run"] for v in two["variants"])
assert sum(d["cases"] for d in two["devices"]) == ran, (two["devices"], ran)
assert sum(d["passed"] for d in two["devices"]) == ran, two["devices"]
assert one["devices"] == [] and plain["devices"] == []
assert two["tool_version"].startswith("pagecheck "), two["tool_version"]
f2, f1 = bug2["variants"][0]["failure"], bug1["variants"][0]["failure"]
assert f2 and f1 and f2["case_index"] == f1["case_index"], (f2, f1)
assert sum(d["failed"] for d in bug2["devices"]) >= 1, bug2["devices"]
PY

# 2. Device lists.
expect 3 "--devices all with no device" -- "$pagecheck" "${run[@]}" --simulated-devices 0 \
  --devices all
says "no CUDA device"
expect 2 "--devices out of range" -- "$pagecheck" "${run[@]}" --simulated-devices 2 --devices 0,2
says "device 2 is out of range: 2 CUDA device(s)"
expect 2 "--devices twice" -- "$pagecheck" "${run[@]}" --simulated-devices 2 --devices 1,1
says "listed twice"
expect 2 "--devices malformed" -- "$pagecheck" "${run[@]}" --simulated-devices 2 --devices 0,x
says "'x' is not a device index"
expect 2 "--devices with --device" -- "$pagecheck" "${run[@]}" --devices 0 --device 0
# Shards over several devices each still merge.
expect 0 "shard 0/2 over 2 devices" -- "$pagecheck" "${run[@]}" --simulated-devices 2 \
  --devices all --shard 0/2 --json s0.json
expect 0 "shard 1/2" -- "$pagecheck" "${run[@]}" --shard 1/2 --json s1.json
expect 0 "merge of the shards" -- "$pagecheck" verify merge s0.json s1.json --json merged.json
/usr/bin/python3 - merged.json plain.json <<'PY' || fail "merged shards differ from the whole run"
import json, sys
merged, plain = (json.load(open(f)) for f in sys.argv[1:])
for m, p in zip(merged["variants"], plain["variants"]):
    for k in ("run", "passed", "failed", "regimes", "tags"):
        assert m[k] == p[k], (m["variant"], k, m[k], p[k])
assert len(merged["devices"]) == 2
PY

# 3. merge refuses shards of another run, naming the file and the field (exit 2).
expect 0 "shard 1/2 of seed 6" -- "$pagecheck" "${base[@]}" --variant sim_reference \
  --cases 24 --seed 6 --shard 1/2 --json seed6.json
expect 2 "merge: another seed" -- "$pagecheck" verify merge s0.json seed6.json
says "'seed6.json': field 'seed' is 6, but 's0.json' has 5"
expect 0 "shard 1/2 of 30 cases" -- "$pagecheck" "${base[@]}" --variant sim_reference \
  --cases 30 --seed 5 --shard 1/2 --json cases30.json
expect 2 "merge: another case count" -- "$pagecheck" verify merge s0.json cases30.json
says "'cases30.json': field 'cases' is 30, but 's0.json' has 24"
/usr/bin/python3 -c "
import json; r = json.load(open('s1.json')); r['tool_version'] = 'pagecheck 0.0.9'
json.dump(r, open('old.json', 'w'))"
expect 2 "merge: another pagecheck version" -- "$pagecheck" verify merge s0.json old.json
says "'old.json': field 'tool_version' is 'pagecheck 0.0.9'"
finish
