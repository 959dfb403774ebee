#!/usr/bin/env bash
# Writes a CTest resource specification file with one "gpus" resource per visible GPU (ids are
# the CUDA indices 0, 1, ...; one slot each, so one GPU test per GPU at a time), for
#   ctest --test-dir BUILD -j "$(nproc)" --resource-spec-file FILE
# (docs/verify.md, "Several GPUs"). Usage: gpu_resource_spec.sh FILE [COUNT]
# COUNT defaults to the GPUs nvidia-smi lists (narrowed by CUDA_VISIBLE_DEVICES when set);
# 0 GPUs writes an empty list: the GPU tests then cannot be scheduled, so run CPU-only CI
# without --resource-spec-file (CTest then ignores RESOURCE_GROUPS).
set -euo pipefail
out=${1:?usage: gpu_resource_spec.sh FILE [COUNT]}
count=${2:-}
if [[ -z $count ]]; then
  if [[ -n ${CUDA_VISIBLE_DEVICES:-} ]]; then
    count=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
  else
    count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  fi
fi
[[ $count =~ ^[0-9]+$ ]] || { echo "gpu_resource_spec.sh: COUNT '$count' is not a number" >&2; exit 2; }
{
  echo '{"version": {"major": 1, "minor": 0}, "local": [{"gpus": ['
  for ((i = 0; i < count; ++i)); do
    printf '  {"id": "%d", "slots": 1}%s\n' "$i" "$( ((i + 1 < count)) && echo ,)"
  done
  echo ']}]}'
} >"$out"
echo "gpu_resource_spec.sh: $count GPU(s) in $out"
