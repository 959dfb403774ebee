#!/usr/bin/env bash
# CPU test of the `pagecheck golden` and `verify --golden-dir` command lines: which golden
# folder is used (found from the current directory, --dir), bad folders and output paths (exit
# 2 naming them), `check --json`, a full disk during regen (exit 3, nothing left), a read-only
# folder, the help footers, and that .gitignore covers regen's lock and temporaries.
# Usage: golden_cli_test.sh PAGECHECK SOURCE_DIR WORK_DIR
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../../../tools/test-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../tools/test-lib.sh" || exit 1
pagecheck=$1
src=$2
work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
outside=$(mktemp -d)  # outside every repository (the build tree may be inside the source tree)
trap 'chmod -R u+w "$outside" 2>/dev/null; rm -rf "$outside"' EXIT
# shellcheck disable=SC2034  # read by test-lib.sh
out_file=$work/out.txt  # the test changes directories
sums() { (cd "$1" && sha256sum -- * | sort); }

# A repository of its own: the marker file and a copy of the committed goldens.
repo=$outside/repo
mkdir -p "$repo/kernels" "$repo/fixtures" "$repo/sub/dir"
: >"$repo/kernels/families.json"
cp -r "$src/fixtures/golden" "$repo/fixtures/golden"
rm -f "$repo/fixtures/golden/.pagecheck-golden.lock"

cd "$repo/sub/dir" || exit 1
expect 0 "check finds the goldens from the current directory" -- "$pagecheck" golden check
says "goldens: $repo/fixtures/golden (found from the current directory)" "check from a subfolder"
cp "$repo/fixtures/golden/pa_gqa_f16_h128_b16.h5" "$outside/keep.h5"
printf 'x' | dd of="$repo/fixtures/golden/pa_gqa_f16_h128_b16.h5" bs=1 seek=3000 conv=notrunc 2>/dev/null
expect 2 "a corrupted golden of this checkout is caught" -- "$pagecheck" golden check
says "BAD  $repo/fixtures/golden/pa_gqa_f16_h128_b16.h5" "corrupted golden named"
cp "$outside/keep.h5" "$repo/fixtures/golden/pa_gqa_f16_h128_b16.h5"
expect 0 "--dir is used and said" -- "$pagecheck" golden check --dir ../../fixtures/golden
says "goldens: $repo/fixtures/golden (--dir)" "--dir named"

cd "$outside" || exit 1
expect 2 "outside a repository without --dir" -- "$pagecheck" golden check
says "no repository found from the current directory" "outside a repository"
expect 2 "verify --golden outside a repository" -- "$pagecheck" verify --golden
expect 2 "verify --golden --golden-dir /nonexistent" -- "$pagecheck" verify --golden --golden-dir /nonexistent --selfcheck-cases 1
says "/nonexistent" "verify names the missing folder"
grep -q "self-check" "$work/out.txt" && fail "verify --golden-dir /nonexistent did work before refusing"
expect 2 "a file as golden folder" -- "$pagecheck" golden check --dir "$repo/kernels/families.json"
says "is not a directory" "a file as golden folder"

# MANIFEST.json that is a folder.
cp -r "$repo/fixtures/golden" "$outside/dirmanifest"
rm "$outside/dirmanifest/MANIFEST.json" && mkdir "$outside/dirmanifest/MANIFEST.json"
for cmd in check regen; do
  expect 2 "golden $cmd with a folder as MANIFEST.json" -- "$pagecheck" golden $cmd --dir "$outside/dirmanifest"
  says "$outside/dirmanifest/MANIFEST.json" "golden $cmd names the folder MANIFEST.json"
done
expect 2 "verify --golden with a folder as MANIFEST.json" -- "$pagecheck" verify --golden --golden-dir "$outside/dirmanifest"
says "$outside/dirmanifest/MANIFEST.json" "verify names the folder MANIFEST.json"

# check --json.
mkdir "$outside/adir"
expect 2 "check --json DIR" -- "$pagecheck" golden check --dir "$repo/fixtures/golden" --json "$outside/adir"
says "--json: '$outside/adir' is a folder" "--json folder named"
grep -q "golden(s)" "$work/out.txt" && fail "check --json DIR checked before refusing"
expect 2 "check --json in a missing folder" -- "$pagecheck" golden check --dir "$repo/fixtures/golden" --json "$outside/nope/r.json"
says "$outside/nope/r.json" "--json missing folder named"
echo "mine" >"$outside/r.json.tmp"
expect 0 "check --json FILE" -- "$pagecheck" golden check --dir "$repo/fixtures/golden" --json "$outside/r.json"
/usr/bin/python3 - "$outside/r.json" "$repo/fixtures/golden" <<'PY' || fail "check --json wrote a wrong report"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "pagecheck.golden_check/1", doc["schema"]
assert doc["dir"] == sys.argv[2] and doc["source"] == "--dir", doc["dir"]
assert doc["exit_code"] == 0 and doc["counts"]["ok"] == doc["counts"]["listed"] == 63, doc["counts"]
assert all(c["status"] == "ok" for c in doc["cases"])
PY
[[ "$(cat "$outside/r.json.tmp")" == mine ]] || fail "check --json touched the user's r.json.tmp"
ls -a "$outside" | grep -q pagecheck-tmp && fail "check --json left a temporary file"

# A full disk during regen: files may not grow past 100 KiB (writes fail with EFBIG).
cp -r "$repo/fixtures/golden" "$outside/full"
before=$(sums "$outside/full")
expect 3 "regen on a full disk" -- bash -c "trap '' XFSZ; ulimit -f 100; exec \"\$0\" golden regen --force --dir \"\$1\"" "$pagecheck" "$outside/full"
says "cannot write golden $outside/full/" "full disk names the golden"
says "File too large" "full disk says why"
grep -q "internal error" "$work/out.txt" || fail "full disk: no error line"
ls -a "$outside/full" | grep -q "pagecheck-tmp" && fail "full disk left a temporary file"
[[ "$(sums "$outside/full")" == "$before" ]] || fail "full disk changed the goldens"

# A read-only golden folder (root writes anywhere: run as nobody).
cp -r "$repo/fixtures/golden" "$outside/ro"
chmod a-w "$outside/ro"
chmod a+rx "$outside"
as_user=()
if [[ $(id -u) -eq 0 ]]; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
if [[ $(id -u) -eq 0 ]] && ! command -v setpriv >/dev/null; then
  echo "skip: read-only folder (root without setpriv)"
else
  expect 2 "regen of a read-only folder" -- "${as_user[@]}" "$pagecheck" golden regen --dir "$outside/ro" pa_ctx1_f16_h128_b16
  says "$outside/ro" "read-only folder named"
  says "not writable" "read-only folder: why"
  mkdir "$outside/rojson"
  chmod a-w "$outside/rojson"
  expect 2 "check --json into a read-only folder" -- "${as_user[@]}" "$pagecheck" golden check --dir "$outside/ro" --json "$outside/rojson/r.json"
  says "--json: '$outside/rojson/r.json': its folder '$outside/rojson' is not writable" "read-only --json folder named"
fi
# The report never goes into the golden folder it checks (it would replace a golden or the
# manifest, or sit among them).
cp -r "$repo/fixtures/golden" "$outside/g2"
for target in MANIFEST.json pa_ctx1_f16_h128_b16.h5 r.json; do
  expect 2 "check --json into the checked folder ($target)" -- "$pagecheck" golden check --dir "$outside/g2" --json "$outside/g2/$target"
  says "--json: '$outside/g2/$target' lies in"
done

# Help footers.
for sub in "" regen check show diff; do
  expect 0 "golden $sub --help" -- "$pagecheck" golden $sub --help
  says "Exit status: 0" "golden $sub --help lists exit codes"
done

# .gitignore covers regen's lock and temporaries.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  for name in .pagecheck-golden.lock .pa_ctx1_f16_h128_b16.h5.12345.pagecheck-tmp .MANIFEST.json.7.pagecheck-tmp; do
    git -C "$src" check-ignore -q --no-index "fixtures/golden/$name" || fail ".gitignore does not cover fixtures/golden/$name"
  done
  echo "ok: .gitignore covers the lock and temporaries"
else
  echo "skip: $src is not a git work tree"
fi
finish
