#!/usr/bin/env bash
# tools/gpu-ab on the CPU, with a payload of stand-in binaries (bash scripts that write what
# `bench --json FILE` would and log their runs): the order of the runs (the other builds, then
# pagecheck, round after round; with --builds only those named, in that order), the one archive that comes back, the compare commands, the
# budget, and the argument checks (exit 2 naming the argument).
# Usage: gpu_ab_test.sh REPO_ROOT WORK_DIR
# shellcheck source-path=SCRIPTDIR source=../test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../test-lib.sh" || exit 1
root=$1
enter_work_dir "$2"
# shellcheck disable=SC2034  # read by test-lib.sh
out_file=$PWD/out.txt
export GPUAB_LOG=$PWD/runs.log

mkdir -p stage payload/bin payload/lib out
cp "$root/tools/gpu-ab" stage/gpu-ab
stand_in() {  # stand_in NAME: a bench that writes its name and arguments as the JSON report
  cat >"payload/bin/$1" <<SH
#!/usr/bin/env bash
[[ \$1 == bench ]] || exit 9
echo "$1" >>"\$GPUAB_LOG"
[[ "$1" == "\${GPUAB_FAIL:-}" ]] && exit 1
while ((\$#)); do [[ \$1 == --json ]] && printf '{"name": "%s"}\n' "$1" >"\$2"; shift; done
exit 0
SH
  chmod +x "payload/bin/$1"
}
stand_in pagecheck
stand_in old
stand_in base
stand_in pagecheck_gpu_tests  # a GPU test: never run
touch payload/lib/libstub.so.1 payload/bin/libplugin.so
tar -C payload -cJf stage/payload.tar.xz .

expect 0 "two rounds of three builds" -- env OUT="$PWD/out" bash stage/gpu-ab --rounds 2 -- \
  --family gather_cached_kv
[[ $(tr '\n' ' ' <runs.log) == "base old pagecheck base old pagecheck " ]] ||
  fail "run order: $(tr '\n' ' ' <runs.log)"
says "pagecheck bench compare --rounds base_r1.json pagecheck_r1.json base_r2.json pagecheck_r2.json"
says "pagecheck bench compare --rounds old_r1.json pagecheck_r1.json old_r2.json pagecheck_r2.json"
[[ $(ls out) == ab.tgz ]] || fail "\$OUT holds more than ab.tgz: $(ls out)"
mkdir back && tar -C back -xzf out/ab.tgz
for f in base_r1 old_r1 pagecheck_r1 base_r2 old_r2 pagecheck_r2; do
  [[ -f back/ab/$f.json ]] || fail "ab.tgz lacks ab/$f.json"
done
grep -q '"old"' back/ab/old_r2.json || fail "old_r2.json is not old's report"
grep -q 'base_r1.json' back/ab/compare.txt || fail "compare.txt lacks the base command"
[[ -z $(find back -name '*gpu_tests*') ]] || fail "a GPU test binary was run"

rm -f runs.log out/ab.tgz
expect 0 "--builds: only the named build beside pagecheck" -- env OUT="$PWD/out" bash stage/gpu-ab \
  --rounds 2 --builds old
[[ $(tr '\n' ' ' <runs.log) == "old pagecheck old pagecheck " ]] ||
  fail "--builds old ran: $(tr '\n' ' ' <runs.log)"
says "pagecheck bench compare --rounds old_r1.json pagecheck_r1.json old_r2.json pagecheck_r2.json"
mkdir back2 && tar -C back2 -xzf out/ab.tgz
[[ ! -e back2/ab/base_r1.json ]] || fail "--builds old also ran base"

rm -f runs.log out/ab.tgz
expect 0 "--builds in the order given" -- env OUT="$PWD/out" bash stage/gpu-ab --rounds 1 \
  --builds old,base
[[ $(tr '\n' ' ' <runs.log) == "old base pagecheck " ]] ||
  fail "--builds old,base ran: $(tr '\n' ' ' <runs.log)"

rm -f runs.log out/ab.tgz
expect 2 "--builds naming what is not staged" -- env OUT="$PWD/out" bash stage/gpu-ab \
  --builds old,mb
says "--builds names 'mb', which the payload does not hold"
[[ ! -s runs.log ]] || fail "a run started although --builds named an unstaged build"
expect 2 "--builds naming pagecheck" -- env OUT="$PWD/out" bash stage/gpu-ab --builds pagecheck
says "--builds names pagecheck"
expect 2 "--builds malformed" -- env OUT="$PWD/out" bash stage/gpu-ab --builds 'old,,base'
says "--builds 'old,,base' is not a comma-separated list"

rm -f runs.log out/ab.tgz
expect 1 "a failing run" -- env OUT="$PWD/out" GPUAB_FAIL=old bash stage/gpu-ab --rounds 1
says "old r1: exit 1"
[[ -f out/ab.tgz ]] || fail "no ab.tgz after a failing run"

rm -f runs.log
expect 1 "no room for a run in the budget" -- env OUT="$PWD/out" bash stage/gpu-ab --budget 2 \
  --run-limit 5
says "budget spent: round 1, base and later runs not started"
[[ ! -s runs.log ]] || fail "a run started beyond the budget"

expect 2 "--rounds 0" -- env OUT="$PWD/out" bash stage/gpu-ab --rounds 0
says "--rounds '0' is not a positive integer"
expect 2 "--budget without a value" -- env OUT="$PWD/out" bash stage/gpu-ab --budget
says "--budget needs a value"
expect 2 "an unknown argument" -- env OUT="$PWD/out" bash stage/gpu-ab --family x
says "unknown argument '--family'"
expect 2 "an output among BENCH_ARGS" -- env OUT="$PWD/out" bash stage/gpu-ab -- --json x.json
says "must not name an output ('--json')"
expect 2 "no \$OUT" -- env -u OUT bash stage/gpu-ab
says "\$OUT must name an existing folder"
rm payload/bin/old payload/bin/base && tar -C payload -cJf stage/payload.tar.xz .
expect 2 "nothing to compare" -- env OUT="$PWD/out" bash stage/gpu-ab
says "nothing to compare: stage the other build with tools/stage-gpu --with NAME=FILE"

finish
