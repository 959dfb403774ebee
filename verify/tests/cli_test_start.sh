# shellcheck shell=bash
# The start of a CLI test in bash whose arguments begin PAGECHECK WORK_DIR: sourced (with no
# arguments, so $1 and $2 are the test's own), it loads tools/test-lib.sh, sets $pagecheck and
# $work and enters WORK_DIR afresh (enter_work_dir). The test names its further arguments itself.
#   source "$(dirname "${BASH_SOURCE[0]}")/<up to verify>/tests/cli_test_start.sh" || exit 1
# shellcheck source-path=SCRIPTDIR source=../../tools/test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/test-lib.sh" || exit 1
# shellcheck disable=SC2034  # both are the sourcing test's
pagecheck=$1
work=$2
enter_work_dir "$work"
