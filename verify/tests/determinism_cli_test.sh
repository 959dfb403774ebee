#!/usr/bin/env bash
# CPU test of the determinism check through the CLI: `verify --simulate` catches the simulated
# race as `nondeterministic` (summary, --json, --junit, the artefact replays it), passes it
# with --determinism-share 0 (only the second run sees it), and checks --determinism-share.
# Usage: determinism_cli_test.sh PAGECHECK WORK_DIR
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../tools/test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/test-lib.sh" || exit 1
start_cli_test "$1" "$2"
race=(verify --simulate --jobs 1 --variant sim_race_last_bit --cases 40)

expect 1 "the race is caught" -- "$pagecheck" "${race[@]}" --json r.json --junit r.xml \
  --artifacts art
says "nondeterministic: outputs of two runs on the same inputs differ in"
says "first: out element"
says "run twice (determinism): "
jq -e '.variants[0].failure.outcome == "nondeterministic" and .variants[0].ok == false
       and .variants[0].runs_twice == .variants[0].run and .exit_code == 1' r.json >/dev/null ||
  fail "r.json: $(jq -c '.variants[0] | {outcome: .failure.outcome, runs_twice, run}' r.json)"
grep -q 'message="nondeterministic: outputs of two runs' r.xml || fail "r.xml has no nondeterministic failure"
artefact=$(ls art/*.h5 2>/dev/null | head -1)
if [[ -z "$artefact" ]]; then
  fail "no artefact"
else
  expect 1 "the artefact replays the race" -- "$pagecheck" verify --simulate --reproduce "$artefact"
  says "nondeterministic"
fi

expect 0 "without the second run the race passes" -- "$pagecheck" "${race[@]}" \
  --determinism-share 0 --artifacts art0
says "run twice (determinism): 0 of 40"
expect 0 "a quarter of the cases run twice" -- "$pagecheck" verify --simulate --jobs 1 \
  --variant sim_reference --cases 40 --determinism-share 0.25
says "run twice (determinism): 10 of 40"
for bad in 1.5 -0.1 x nan; do
  expect 2 "--determinism-share $bad" -- "$pagecheck" verify --simulate --determinism-share "$bad"
  says "determinism-share"
done
finish
