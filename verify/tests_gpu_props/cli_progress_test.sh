#!/usr/bin/env bash
# CPU test of what CI logs see from `verify` (stdout not a terminal): a progress line about
# every PAGECHECK_PROGRESS_INTERVAL seconds (cases done of total, failing variants, elapsed,
# estimate), the "no GPU" notice at once, and on SIGINT the partial summary and exit 130.
# Usage: cli_progress_test.sh PAGECHECK WORK_DIR
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../tools/test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/test-lib.sh" || exit 1
start_cli_test "$1" "$2"
sim=(verify --simulate --variant sim_reference --jobs 2)

# Progress lines on a non-terminal stdout, at the interval asked for.
PAGECHECK_PROGRESS_INTERVAL=0.3 "$pagecheck" "${sim[@]}" --cases 1000 >fast.txt 2>&1 ||
  fail "verify --simulate failed: $(tail -5 fast.txt)"
lines=$(grep -cE '^verify: [0-9]+/1000 cases, [0-9]+ variant\(s\) failing, [0-9]+ s elapsed' fast.txt)
grep -qE 'about [0-9]+ s left' fast.txt || fail "no time estimate in the progress lines"
[[ $lines -ge 3 ]] || fail "$lines progress lines at a 0.3 s interval, expected 3 or more"
[[ $(grep -n '^verify: ' fast.txt | head -1 | cut -d: -f1) -lt $(grep -n 'pagecheck verify: seed' fast.txt | cut -d: -f1) ]] ||
  fail "the progress lines do not come before the summary"
# The default interval is about 10 s: a run prints at most one line more than its length in
# tens of seconds (whatever the machine's load makes that length).
start=$(date +%s)
"$pagecheck" "${sim[@]}" --cases 400 >slow.txt 2>&1
took=$(($(date +%s) - start))
slow=$(grep -c '^verify: ' slow.txt)
[[ $slow -le $((1 + took / 10)) ]] ||
  fail "$slow progress lines in a $took s run at the default interval"
echo "ok: progress lines ($lines at 0.3 s, $slow at the default)"

# The "no GPU" notice is flushed before the reference self-check runs.
probe=$("$pagecheck" verify --cases 1 --selfcheck-cases 1 2>&1)
if grep -q "no GPU" <<<"$probe"; then
  "$pagecheck" verify --selfcheck-cases 4000 >nogpu.txt 2>&1 &
  pid=$!
  seen=0
  for _ in $(seq 1 100); do
    if grep -q "no GPU" nogpu.txt; then seen=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null || fail "the self-check ended before the notice could be seen"
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  [[ $seen == 1 ]] && echo "ok: the no-GPU notice appears at once" || fail "the no-GPU notice was not flushed"
fi

# SIGINT: the partial summary, then exit 130. Job control on: a script's background job would
# otherwise start with SIGINT ignored (and an ignored SIGINT stays ignored).
set -m
PAGECHECK_PROGRESS_INTERVAL=0.2 "$pagecheck" "${sim[@]}" --cases 100000 >int.txt 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  grep -q '^verify: ' int.txt && break
  sleep 0.1
done
kill -INT "$pid"
for _ in $(seq 1 300); do  # at most 30 s for the running cases to finish
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  fail "still running 30 s after SIGINT"
  kill -KILL "$pid"
fi
wait "$pid"
rc=$?
[[ $rc == 130 ]] || fail "exit $rc after SIGINT, expected 130"
grep -q 'pagecheck verify: seed' int.txt || fail "no summary after SIGINT"
grep -q 'sim_reference' int.txt || fail "the summary lacks the variant"
grep -q 'interrupted' int.txt || fail "the summary does not say it was interrupted"
grep -q 'crashed' int.txt && fail "workers died of the SIGINT (crashed cases)"
[[ $fails == 0 ]] && echo "ok: SIGINT prints the partial summary and exits 130"
tail -8 int.txt | sed 's/^/    /'

finish
