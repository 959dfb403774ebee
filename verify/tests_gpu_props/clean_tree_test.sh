#!/usr/bin/env bash
# Issue 14's done-when: runs from the source root leave nothing in the source tree. Runs a
# simulated selftest, a plain `verify` (no GPU: the reference self-check) and a simulated
# verify that catches a bug, all with the source root as current directory, and compares
# `git status` (untracked and ignored files included) before and after.
# Usage: clean_tree_test.sh PAGECHECK SOURCE_DIR WORK_DIR (exit 77: not a git checkout).
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../tools/test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/test-lib.sh" || exit 1
pagecheck=$1
src=$2
work=$3
git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "skip: not a git checkout"; exit 77; }
rm -rf "$work" && mkdir -p "$work/tmp" || exit 1
export TMPDIR="$work/tmp"
state() { git -C "$src" status --porcelain --ignored | LC_ALL=C sort; }
state >"$work/before.txt"
cd "$src" || exit 1
run() {  # run STATUS... -- command: the command's exit status must be one of STATUS
  local ok=() s
  while [[ $1 != -- ]]; do ok+=("$1"); shift; done
  shift
  "$@" >"$work/out.txt" 2>&1
  s=$?
  if [[ " ${ok[*]} " != *" $s "* ]]; then
    fail "$* exited $s"; tail -20 "$work/out.txt"
  fi
}
run 0 -- "$pagecheck" selftest --simulate --cases 60 --jobs 2
run 0 1 -- "$pagecheck" verify --cases 4 --selfcheck-cases 4
run 1 -- "$pagecheck" verify --simulate --variant sim_scale_twice --cases 20 --jobs 2
state >"$work/after.txt"
if ! diff "$work/before.txt" "$work/after.txt" >"$work/diff.txt"; then
  fail "the runs changed the source tree:"; cat "$work/diff.txt"
fi
ls "$TMPDIR"/pagecheck-runs/selftest-* >/dev/null 2>&1 || fail "no run folder under TMPDIR"
finish
