#!/usr/bin/env bash
# CPU test of issue 14's CLI items for `verify` / `selftest`: default artefacts in a run folder
# outside the current directory, output paths checked before any work (and a user's X.tmp
# kept), arguments validated before the GPU check, artefact checks before replay, numbers
# CLI11 would accept wrongly, partial merges and empty shards, JUnit XML, exit statuses in
# every --help.  Usage: cli_output_test.sh PAGECHECK WORK_DIR SOURCE_DIR
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../tools/test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/test-lib.sh" || exit 1
start_cli_test "$1" "$2"
src=$3
mkdir -p cwd && cd cwd || exit 1
sim=(verify --simulate --jobs 2)

# 1. Default artefacts: a run folder under $TMPDIR, printed; nothing in the current directory.
expect 0 "selftest --simulate" -- "$pagecheck" selftest --simulate --cases 60 --jobs 2
says "artefacts: $TMPDIR/pagecheck-runs/selftest-"
ls "$TMPDIR"/pagecheck-runs/selftest-*/*.h5 >/dev/null 2>&1 || fail "no selftest artefacts in the run folder"
expect 1 "verify --simulate, a caught bug" -- "$pagecheck" "${sim[@]}" --variant sim_scale_twice --cases 30
says "artefacts: $TMPDIR/pagecheck-runs/verify-"
ls "$TMPDIR"/pagecheck-runs/verify-*/*.h5 >/dev/null 2>&1 || fail "no verify artefacts in the run folder"
[[ -z "$(ls -A)" || "$(ls -A)" == out.txt ]] || fail "files left in the current directory: $(ls -A | tr "\n" " ")"
artefact=$(ls "$TMPDIR"/pagecheck-runs/verify-*/*.h5 | head -1)

# 2. Output paths, before any work; a user's X.tmp is never touched.
mkdir folder && touch plain
expect 2 "--json FOLDER" -- "$pagecheck" "${sim[@]}" --variant sim_reference --cases 2 --json folder
says "--json: 'folder' is a folder"
expect 2 "--junit in a missing folder" -- "$pagecheck" "${sim[@]}" --cases 2 --junit no/such/r.xml
says "--junit: 'no/such/r.xml'"
expect 2 "--artifacts FILE" -- "$pagecheck" "${sim[@]}" --cases 2 --artifacts plain
says "--artifacts: 'plain' is not a folder"
expect 2 "selftest --json FOLDER" -- "$pagecheck" selftest --simulate --cases 2 --json folder
expect 2 "selftest --artifacts FILE" -- "$pagecheck" selftest --simulate --cases 2 --artifacts plain
says "--artifacts: 'plain' is not a folder"
expect 2 "merge --json FOLDER" -- "$pagecheck" verify merge plain --json folder
says "--json: 'folder' is a folder"
expect 2 "--json below a file" -- "$pagecheck" "${sim[@]}" --cases 2 --json plain/r.json
says "is not a folder"
if [[ $(id -u) != 0 ]]; then
  mkdir locked && chmod 555 locked
  expect 2 "--json in an unwritable folder" -- "$pagecheck" "${sim[@]}" --cases 2 --json locked/r.json
  says "not writable"
  chmod 755 locked
fi
echo mine >r.json.tmp
expect 0 "--json next to the user's r.json.tmp" -- "$pagecheck" "${sim[@]}" --variant sim_reference --cases 4 --json r.json
[[ "$(cat r.json.tmp 2>/dev/null)" == mine ]] || fail "verify --json touched r.json.tmp"
grep -q '"schema"' r.json || fail "verify --json wrote no report"
touch plain-mode
[[ $(stat -c %a r.json) == $(stat -c %a plain-mode) ]] ||
  fail "r.json has mode $(stat -c %a r.json), a plain new file $(stat -c %a plain-mode)"
echo mine >s.json.tmp
expect 0 "selftest --json next to s.json.tmp" -- "$pagecheck" selftest --simulate --cases 60 --jobs 2 --json s.json
[[ "$(cat s.json.tmp 2>/dev/null)" == mine ]] || fail "selftest --json touched s.json.tmp"
ls .*.pagecheck-tmp >/dev/null 2>&1 && fail "temporary files left behind: $(ls .*.pagecheck-tmp)"

# 3. Arguments validated before the GPU check (the registry needs no GPU).
if "$pagecheck" list --json | grep -q '"cuda_kernels": true'; then
  expect 2 "--variant nope" -- "$pagecheck" verify --variant nope --selfcheck-cases 1
  says "--variant 'nope'"
  says "v1_baseline"
  expect 2 "--variant of another family" -- "$pagecheck" verify --kernel gather_cached_kv --variant v2_split --selfcheck-cases 1
  says "is a paged_attention variant, not gather_cached_kv"
  says "naive"
else
  echo "skip: this build has no built-in kernels (variant names)"
fi
"$pagecheck" verify --cases 1 --selfcheck-cases 1 >gpu.txt 2>&1
if grep -q "no GPU" gpu.txt; then
  expect 3 "--record without a GPU" -- "$pagecheck" verify --record --repo "$src" --selfcheck-cases 1
  says "--record needs a GPU"
  [[ -z "$(git -C "$src" status --porcelain -- fixtures/verification 2>/dev/null)" ]] ||
    fail "--record without a GPU changed fixtures/verification"
fi

# 4. --reproduce names what is wrong with the file (exit 2), GPU or not.
echo "not hdf5" >bad.h5
expect 2 "--reproduce of a text file" -- "$pagecheck" verify --reproduce bad.h5
says "not an HDF5 file"
expect 2 "--reproduce of a folder" -- "$pagecheck" verify --reproduce folder
says "is a folder"
golden=$(ls "$src"/fixtures/golden/*.h5 | head -1)
expect 2 "--reproduce of a golden (not an artefact)" -- "$pagecheck" verify --reproduce "$golden"
says "artifact_schema"
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
  cp "$artefact" cut.h5
  /usr/bin/python3 -c "import h5py,sys; f=h5py.File(sys.argv[1],'r+'); del f['inputs/key_cache']" cut.h5
  expect 2 "--reproduce of an artefact missing a dataset" -- "$pagecheck" verify --reproduce cut.h5
  says "missing dataset 'inputs/key_cache'"
fi
expect 1 "--reproduce of a good artefact still replays" -- "$pagecheck" verify --simulate --reproduce "$artefact"

# 5. Numbers CLI11 accepts wrongly.
expect 2 "--case-timeout nan" -- "$pagecheck" verify --case-timeout nan
says "--case-timeout"
expect 2 "--shrink-budget inf" -- "$pagecheck" selftest --simulate --shrink-budget inf
expect 2 "--seed -1" -- "$pagecheck" verify --seed -1
says "--seed"
expect 2 "--seed 2^64" -- "$pagecheck" verify --seed 18446744073709551616
expect 2 "selftest --seed -1" -- "$pagecheck" selftest --simulate --seed -1
expect 2 "selftest --cases 0" -- "$pagecheck" selftest --simulate --cases 0
says "--cases"
expect 2 "selftest --jobs 65" -- "$pagecheck" selftest --simulate --jobs 65
says "--jobs"
# Empty values are refused, not read as 0 or as the option left out (a script's unset variable).
expect 2 "--reproduce ''" -- "$pagecheck" verify --reproduce ""
says "--reproduce: empty value"
expect 2 "--json ''" -- "$pagecheck" "${sim[@]}" --variant sim_reference --cases 2 --json ""
says "--json: empty value"
expect 2 "--kernel ''" -- "$pagecheck" verify --kernel ""
expect 2 "bench compare --threshold ''" -- "$pagecheck" bench compare a.json a.json --threshold ""
says "--threshold: empty value"
expect 2 "golden show ''" -- "$pagecheck" golden show ""
# --devices is read before any GPU is asked (and under --dry-run).
expect 2 "--devices abc" -- "$pagecheck" verify --cases 2 --devices abc
says "--devices: 'abc': 'abc' is not a device index"
expect 2 "--devices 0,0 --dry-run" -- "$pagecheck" verify --cases 2 --devices 0,0 --dry-run
says "--devices: '0,0': device 0 is listed twice"
expect 2 "bench --devices -1" -- "$pagecheck" bench --family gather_cached_kv --devices -1
says "'-1' is not a device index"
# The case options are declared once (case_run_options.h); each command keeps its defaults.
expect 0 "verify --help" -- "$pagecheck" verify --help
says "--shrink-budget FLOAT:POSITIVE=120"
says "pagecheck-runs/verify-"
expect 0 "selftest --help" -- "$pagecheck" selftest --help
says "--shrink-budget FLOAT:POSITIVE=60"
says "--cases INT:INT in [1 - 1000000]=200"
says "pagecheck-runs/selftest-"
expect 0 "--seed 2^64-1 is fine" -- "$pagecheck" "${sim[@]}" --variant sim_reference --cases 2 --seed 18446744073709551615

# 6. Partial merges fail unless allowed; a shard that gets no case is bad usage.
expect 0 "shard 0/3" -- "$pagecheck" "${sim[@]}" --variant sim_reference --cases 9 --shard 0/3 --json s0.json
expect 0 "shard 1/3" -- "$pagecheck" "${sim[@]}" --variant sim_reference --cases 9 --shard 1/3 --json s1.json
expect 1 "merge with a missing shard" -- "$pagecheck" verify merge s0.json s1.json
says "2 of 3 shards"
expect 0 "merge --allow-partial" -- "$pagecheck" verify merge s0.json s1.json --allow-partial
expect 2 "--cases 5 --shard 7/10" -- "$pagecheck" verify --cases 5 --shard 7/10
says "--shard 7/10"

# 8. JUnit XML: a test case per variant, the counterexample and reproduce line in the failure.
expect 1 "--junit" -- "$pagecheck" "${sim[@]}" --kernel paged_attention --variant sim_scale_twice --cases 30 --junit j.xml
/usr/bin/python3 - j.xml <<'PY' || fail "JUnit XML check"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall("./testsuite/testcase")
assert len(cases) == 1, len(cases)
failure = cases[0].find("failure")
assert failure is not None, "no <failure>"
for needle in ("COUNTEREXAMPLE", "shrunk layout", "reproduce:", "--reproduce-spec"):
    assert needle in failure.text, needle
assert root.find("testsuite").get("failures") == "1"
PY
expect 0 "--junit, passing variants" -- "$pagecheck" "${sim[@]}" --kernel gather_cached_kv --cases 6 --variant sim_gather_reference --junit p.xml
/usr/bin/python3 -c "
import sys, xml.etree.ElementTree as ET
s = ET.parse('p.xml').getroot().find('testsuite')
assert s.get('failures') == '0' and len(s.findall('testcase')) == 1
" || fail "passing JUnit XML"
expect 0 "--junit without a GPU (reference self-check)" -- "$pagecheck" verify --selfcheck-cases 2 --junit n.xml
/usr/bin/python3 -c "import xml.etree.ElementTree as ET; ET.parse('n.xml')" || fail "self-check JUnit XML"

# 9. Exit statuses in every command's --help, subcommands included.
check_help() {  # check_help WORDS...
  local help
  help=$("$pagecheck" "$@" --help 2>&1)
  grep -q "Exit status:" <<<"$help" || fail "no exit statuses in: pagecheck $* --help"
  local sub
  for sub in $(awk '/^Subcommands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}' <<<"$help"); do
    check_help "$@" "$sub"
  done
}
check_help
echo "ok: exit statuses in every --help"

finish
