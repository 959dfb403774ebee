# shellcheck shell=bash
# Helpers of the command-line tests written in bash (verify/tests_gpu_props/*.sh,
# verify/golden/tests/golden_cli_test.sh, ...); each test sources it by its own location:
#   source "$(dirname "${BASH_SOURCE[0]}")/<up to the root>/tools/test-lib.sh" || exit 1
# `expect` sends a command's output to $out_file (default out.txt in the current directory, so
# a test that changes directories sets it to an absolute path); `says` searches it. A test
# counts its failures in $fails and ends with `finish` (exit 0 when none, else 1).

fails=0

# fail MESSAGE...: reports one failure.
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

# show_output: the end of the last command's output, indented.
show_output() {
  sed 's/^/    /' "${out_file:-out.txt}" | tail -20
}

# expect STATUS DESCRIPTION -- COMMAND...: runs COMMAND; its exit status must be STATUS.
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"${out_file:-out.txt}" 2>&1
  local got=$?
  if [[ $got -ne $want ]]; then
    fail "$what: exit $got, expected $want"
    show_output
  else
    echo "ok: $what"
  fi
}

# says TEXT [DESCRIPTION]: the last command's output holds TEXT.
says() {
  grep -qF -- "$1" "${out_file:-out.txt}" || {
    fail "${2:+$2: }output lacks '$1'"
    show_output
  }
}

# enter_work_dir DIR: starts DIR afresh (with DIR/tmp as $TMPDIR, so default run folders of the
# commands under test land there) and makes it the current directory; exits when it cannot.
enter_work_dir() {
  rm -rf "$1" && mkdir -p "$1/tmp" && cd "$1" || exit 1
  export TMPDIR="$PWD/tmp"  # absolute even when DIR was given relative
}

# start_cli_test PAGECHECK WORK_DIR: the start of a CLI test whose arguments begin with these
# two: sets $pagecheck and $work for the test and enters WORK_DIR afresh (enter_work_dir).
start_cli_test() {
  # shellcheck disable=SC2034  # both are the calling test's
  pagecheck=$1
  # shellcheck disable=SC2034
  work=$2
  enter_work_dir "$work"
}

# finish: prints the failure count and exits 0 when there was none, else 1.
finish() {
  echo "$fails failure(s)"
  exit $((fails > 0))
}
