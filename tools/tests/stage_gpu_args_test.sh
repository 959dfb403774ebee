#!/usr/bin/env bash
# tools/stage-gpu's argument checks, on the CPU: every case must exit 2 with a message naming
# the argument, before anything is built or staged (the repository's .gpucheck/ is untouched).
# Usage: stage_gpu_args_test.sh REPO_ROOT WORK_DIR
# shellcheck source-path=SCRIPTDIR source=../test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../test-lib.sh" || exit 1
root=$1
stage=$root/tools/stage-gpu
enter_work_dir "$2"
# shellcheck disable=SC2034  # read by test-lib.sh
out_file=$PWD/out.txt
staged_before=$(stat -c %Y "$root/.gpucheck" 2>/dev/null || echo none)

cp /bin/true tool
touch plain

expect 2 "--with without a value" -- "$stage" --with
says "--with needs NAME=FILE"
expect 2 "NAME with a slash" -- "$stage" --with a/b=tool --no-build build/release
says "--with 'a/b=tool': expected NAME=FILE"
expect 2 "no '='" -- "$stage" --with tool --no-build build/release
says "--with 'tool': expected NAME=FILE"
expect 2 "FILE not executable (relative to the caller's folder)" -- \
  "$stage" --with base=plain --no-build build/release
says "'$PWD/plain' is not an executable file"
expect 2 "FILE missing" -- "$stage" --with base=missing --no-build build/release
says "'$PWD/missing' is not an executable file"
expect 2 "NAME like a GPU test" -- "$stage" --with base_gpu_tests=tool --no-build build/release
says "must not match *gpu*test*"
expect 2 "NAME like a plugin" -- "$stage" --with base.so=tool --no-build build/release
says "must not match"
expect 2 "unknown option" -- "$stage" --bogus
says "unknown option '--bogus'"
expect 2 "--no-build without BUILD_DIR" -- "$stage" --no-build --with base=tool
says "usage: tools/stage-gpu"
expect 2 "a valid --with, no such build directory" -- \
  "$stage" --with base=tool --no-build "$PWD/no_such_build"
says "no build directory"

staged_after=$(stat -c %Y "$root/.gpucheck" 2>/dev/null || echo none)
[[ $staged_before == "$staged_after" ]] || fail ".gpucheck/ changed ($staged_before -> $staged_after)"
finish
