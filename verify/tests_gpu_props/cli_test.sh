#!/usr/bin/env bash
# CPU test of the `pagecheck verify` / `selftest` command lines through the CPU simulations:
# exit statuses, sharding + merge, counterexample output, artefact replay, bad usage.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../tools/test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/test-lib.sh" || exit 1
start_cli_test "$1" "$2"

expect 0 "correct simulations pass" -- "$pagecheck" verify --simulate --variant sim_reference --cases 40 --jobs 2
expect 1 "a simulated bug is caught" -- "$pagecheck" verify --simulate --variant sim_context_off_by_one --cases 60 --jobs 2 --artifacts arts
grep -q "COUNTEREXAMPLE" out.txt || fail "no counterexample block"
grep -q "reproduce: pagecheck verify --simulate --kernel paged_attention --variant sim_context_off_by_one --reproduce-spec '{" out.txt ||
  fail "no reproduce line"
cp out.txt caught.txt
artifact=$(ls arts/*.h5 2>/dev/null | head -1)
if [[ -z "$artifact" ]]; then
  fail "no artefact written"
else
  expect 1 "the artefact replays to the failure" -- "$pagecheck" verify --simulate --reproduce "$artifact"
fi
spec=$(sed -n "s/.*--reproduce-spec '\(.*\)'$/\1/p" "$work/caught.txt" | head -1)
expect 1 "the reproduce line replays the counterexample" -- \
  "$pagecheck" verify --simulate --variant sim_context_off_by_one --reproduce-spec "$spec"
grep -q "COUNTEREXAMPLE" out.txt || fail "replay printed no counterexample"
printf '%s' "$spec" >spec.json
expect 0 "a spec file replays on a correct variant" -- \
  "$pagecheck" verify --simulate --variant sim_reference --reproduce-spec spec.json
expect 2 "malformed --reproduce-spec" -- "$pagecheck" verify --simulate --reproduce-spec '{"family":'
grep -q -- "--reproduce-spec" out.txt || fail "the error does not name --reproduce-spec"
expect 2 "--reproduce-spec file missing" -- "$pagecheck" verify --reproduce-spec no-such-spec.json
expect 2 "--reproduce-spec of another family" -- \
  "$pagecheck" verify --simulate --kernel gather_cached_kv --reproduce-spec spec.json
expect 2 "malformed RC_PARAMS, without a GPU" -- env RC_PARAMS="reproduce=garbage" "$pagecheck" verify --cases 2
grep -q "RC_PARAMS" out.txt || fail "the error does not name RC_PARAMS"
expect 2 "RC_PARAMS with --simulate" -- env RC_PARAMS="reproduce=garbage" \
  "$pagecheck" verify --simulate --variant sim_reference --cases 2
# The split-K bug shrinks to its one long sequence (issue 12).
expect 1 "split-K bug caught" -- "$pagecheck" verify --simulate --variant sim_partition_max_only \
  --cases 200 --jobs 2 --artifacts arts --json splitk.json
python3 - splitk.json <<'PY' || fail "split-K counterexample not one sequence"
import json, sys
spec = json.load(open(sys.argv[1]))["variants"][0]["failure"]["spec"]
print("split-K counterexample: context_lens", spec["context_lens"])
sys.exit(0 if spec["num_seqs"] == 1 and 256 < spec["context_lens"][0] <= 258 else 1)
PY
expect 0 "shard 0/2" -- "$pagecheck" verify --simulate --kernel gather_cached_kv --variant sim_gather_reference --cases 30 --shard 0/2 --json s0.json
expect 0 "shard 1/2" -- "$pagecheck" verify --simulate --kernel gather_cached_kv --variant sim_gather_reference --cases 30 --shard 1/2 --json s1.json
expect 0 "merge of the shards" -- "$pagecheck" verify merge s0.json s1.json --json merged.json
grep -q '"run": 30' merged.json || fail "merged report does not hold 30 cases"
expect 2 "bad shard" -- "$pagecheck" verify --shard 3/2
expect 2 "unknown family" -- "$pagecheck" verify --kernel nope
expect 2 "missing artefact" -- "$pagecheck" verify --reproduce does-not-exist.h5
expect 2 "merge of a non-report" -- "$pagecheck" verify merge out.txt
expect 0 "selftest over the simulated bugs" -- "$pagecheck" selftest --simulate --cases 120 --jobs 2
grep -q "PASSED" out.txt || fail "selftest did not print PASSED"
# Without a GPU, plain `verify` says so and self-checks the reference (with one, it verifies).
expect 0 "plain verify" -- "$pagecheck" verify --cases 10 --selfcheck-cases 6
grep -Eq "no GPU|cases in" out.txt || fail "plain verify printed neither"
finish
