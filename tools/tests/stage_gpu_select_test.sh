#!/usr/bin/env bash
# tools/stage-gpu's --only and --out and its carry-size check, on the CPU, in a scratch git
# repository holding a copy of the staging scripts and a stand-in build (copies of /bin/true
# with an .nv_fatbin section, as a CUDA executable has): only the named executables are staged,
# into the named folder; names not in the build, folders git does not ignore and folder paths
# exit 2 naming the argument; a tree and folder over PAGECHECK_CARRY_LIMIT_BYTES exit 3 with
# both sizes. Nothing is written into the real repository.
# Usage: stage_gpu_select_test.sh REPO_ROOT WORK_DIR
# shellcheck source-path=SCRIPTDIR source=../test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../test-lib.sh" || exit 1
root=$1
enter_work_dir "$2"
# shellcheck disable=SC2034  # read by test-lib.sh
out_file=$PWD/out.txt

mkdir -p repo/tools build
cp "$root/tools/stage-gpu" "$root/tools/gpu-check" "$root/tools/gpu-ab" repo/tools/
printf '/.gpucheck/\n/.gpucheck2/\n/build/\n' >repo/.gitignore
echo "a tracked file" >repo/README
git -C repo init -q && git -C repo add -A &&
  git -C repo -c user.name=t -c user.email=t@t commit -qm scratch || exit 1
touch build/CMakeCache.txt
printf 'device code' >fatbin.bin
device_exe() {  # device_exe NAME: an ELF executable with an .nv_fatbin section
  objcopy --add-section .nv_fatbin=fatbin.bin /bin/true "build/$1" && chmod +x "build/$1"
}
device_exe pagecheck
device_exe pagecheck_gpu_tests
device_exe pagecheck_verify_gpu_props_tests
cp /bin/true build/pagecheck_cpu_gpu_like_test  # no device code: never staged
stage=repo/tools/stage-gpu
listed() { tar -tJf "repo/$1/payload.tar.xz" | grep '^./bin/.' | sort | tr '\n' ' '; }

expect 0 "--only pagecheck into --out .gpucheck2" -- "$stage" --no-build --only pagecheck \
  --out .gpucheck2 "$PWD/build"
[[ $(listed .gpucheck2) == "./bin/pagecheck " ]] || fail "--only pagecheck staged: $(listed .gpucheck2)"
[[ -f repo/.gpucheck2/gpu-check && -f repo/.gpucheck2/MANIFEST ]] || fail "no gpu-check / MANIFEST"
[[ ! -e repo/.gpucheck ]] || fail "--out .gpucheck2 also wrote .gpucheck"
says "bash .gpucheck2/gpu-check (carry: .gpucheck2)"
says "a call carrying .gpucheck2 takes"

expect 0 "--only two names, the default folder" -- "$stage" --no-build \
  --only pagecheck_gpu_tests,pagecheck "$PWD/build"
[[ $(listed .gpucheck) == "./bin/pagecheck ./bin/pagecheck_gpu_tests " ]] ||
  fail "--only two names staged: $(listed .gpucheck)"

expect 0 "without --only: every executable with device code" -- "$stage" --no-build "$PWD/build"
[[ $(listed .gpucheck) == "./bin/pagecheck ./bin/pagecheck_gpu_tests ./bin/pagecheck_verify_gpu_props_tests " ]] ||
  fail "all staged: $(listed .gpucheck)"

expect 3 "over the carry limit" -- env PAGECHECK_CARRY_LIMIT_BYTES=100 "$stage" --no-build \
  --only pagecheck "$PWD/build"
says "the working tree"
says "over the limit a device call carries: stage fewer binaries (--only) into two folders (--out)"
[[ -f repo/.gpucheck/payload.tar.xz ]] || fail "nothing staged when over the limit"

before=$(stat -c %Y repo/.gpucheck/payload.tar.xz)
expect 2 "--only naming what the build lacks" -- "$stage" --no-build --only pagecheck,nope \
  "$PWD/build"
says "--only names 'nope', which"
expect 2 "--only naming an executable without device code" -- "$stage" --no-build \
  --only pagecheck_cpu_gpu_like_test "$PWD/build"
says "--only names 'pagecheck_cpu_gpu_like_test'"
expect 2 "--only malformed" -- "$stage" --no-build --only 'a,,b' "$PWD/build"
says "--only 'a,,b' is not a comma-separated list"
expect 2 "--only without a value" -- "$stage" --only
says "--only needs NAME,..."
expect 2 "--out a path" -- "$stage" --no-build --out a/b "$PWD/build"
says "--out 'a/b': expected a folder name"
expect 2 "--out not ignored by git" -- "$stage" --no-build --out staged "$PWD/build"
says "--out 'staged': git does not ignore it"
[[ ! -e repo/staged ]] || fail "--out staged was created"
[[ $before == "$(stat -c %Y repo/.gpucheck/payload.tar.xz)" ]] || fail "a refused run restaged .gpucheck"
finish
