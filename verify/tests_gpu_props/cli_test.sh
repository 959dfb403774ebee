#!/usr/bin/env bash
# CPU test of the `pagecheck verify` / `selftest` command lines through the CPU simulations:
# exit statuses, sharding + merge, counterexample output, artefact replay, bad usage.
set -uo pipefail
pagecheck=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fails=0
expect() {  # expect STATUS DESCRIPTION -- command...
  local want=$1 what=$2
  shift 3
  "$@" >"out.txt" 2>&1
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL: $what: exit $got, expected $want"; sed 's/^/    /' out.txt | tail -40; fails=$((fails + 1))
  else
    echo "ok: $what"
  fi
}

expect 0 "correct simulations pass" -- "$pagecheck" verify --simulate --variant sim_reference --cases 40 --jobs 2
expect 1 "a simulated bug is caught" -- "$pagecheck" verify --simulate --variant sim_context_off_by_one --cases 60 --jobs 2 --artifacts arts
grep -q "COUNTEREXAMPLE" out.txt || { echo "FAIL: no counterexample block"; fails=$((fails + 1)); }
grep -q 'RC_PARAMS="reproduce=' out.txt || { echo "FAIL: no reproduce string"; fails=$((fails + 1)); }
cp out.txt caught.txt
artifact=$(ls arts/*.h5 2>/dev/null | head -1)
if [[ -z "$artifact" ]]; then
  echo "FAIL: no artefact written"; fails=$((fails + 1))
else
  expect 1 "the artefact replays to the failure" -- "$pagecheck" verify --simulate --reproduce "$artifact"
fi
repro=$(grep -o 'reproduce=[^"]*' "$work/caught.txt" | head -1)
expect 1 "the reproduce string replays the counterexample" -- env RC_PARAMS="$repro" \
  "$pagecheck" verify --simulate --variant sim_context_off_by_one
grep -q "COUNTEREXAMPLE" out.txt || { echo "FAIL: replay printed no counterexample"; fails=$((fails + 1)); }
expect 0 "shard 0/2" -- "$pagecheck" verify --simulate --kernel gather_cached_kv --variant sim_gather_reference --cases 30 --shard 0/2 --json s0.json
expect 0 "shard 1/2" -- "$pagecheck" verify --simulate --kernel gather_cached_kv --variant sim_gather_reference --cases 30 --shard 1/2 --json s1.json
expect 0 "merge of the shards" -- "$pagecheck" verify merge s0.json s1.json --json merged.json
grep -q '"run": 30' merged.json || { echo "FAIL: merged report does not hold 30 cases"; fails=$((fails + 1)); }
expect 2 "bad shard" -- "$pagecheck" verify --shard 3/2
expect 2 "unknown family" -- "$pagecheck" verify --kernel nope
expect 2 "missing artefact" -- "$pagecheck" verify --reproduce does-not-exist.h5
expect 2 "merge of a non-report" -- "$pagecheck" verify merge out.txt
expect 0 "selftest over the simulated bugs" -- "$pagecheck" selftest --simulate --cases 120 --jobs 2
grep -q "PASSED" out.txt || { echo "FAIL: selftest did not print PASSED"; fails=$((fails + 1)); }
# Without a GPU, plain `verify` says so and self-checks the reference (with one, it verifies).
expect 0 "plain verify" -- "$pagecheck" verify --cases 10 --selfcheck-cases 6
grep -Eq "no GPU|cases in" out.txt || { echo "FAIL: plain verify printed neither"; fails=$((fails + 1)); }
echo "$fails failure(s)"
exit $((fails > 0))
