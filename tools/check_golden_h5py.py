#!/usr/bin/python3
"""Interop check: read every golden fixture with h5py and check it against MANIFEST.json.

Usage: /usr/bin/python3 tools/check_golden_h5py.py [fixtures/golden]

For every case of the manifest: the file's SHA-256 and every dataset's dtype, shape and SHA-256
(of the bytes h5py returns) match the manifest and the dataset's own `sha256` attribute;
float16 datasets read as '<f2', bfloat16 ones as '<u2' with attribute dtype="bfloat16";
no dataset is missing or extra; the root attributes name the case and its schema version.
Then, as an oracle independent of the C++ code, numpy recomputes every expected output from
the stored inputs through the documented layouts: copies bit for bit, attention within 1e-10
of the largest |out_f64| (and lse likewise); it also prints how peaked each case's softmax is.
Exit 0 when everything matches, 1 otherwise (each problem printed), 2 on bad usage.
"""
import hashlib
import json
import os
import sys

import h5py
import numpy as np

NUMPY_DTYPES = {
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype("<u2"),
    "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"),
    "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"),
}


def text(value):
    """Attribute value as str (h5py returns fixed-length strings as bytes)."""
    return value.decode("ascii") if isinstance(value, (bytes, np.bytes_)) else str(value)


def raw_view(dataset):
    """The logical strided view of a stored tensor, in its stored dtype (bfloat16: uint16)."""
    flat = np.array(dataset[()]).reshape(-1)
    shape = [int(v) for v in dataset.attrs["logical_shape"]]
    strides = [int(v) * flat.itemsize for v in dataset.attrs["strides"]]
    return np.lib.stride_tricks.as_strided(flat, shape=shape, strides=strides, writeable=False)


def as_float64(array, dtype_name):
    """Stored values as float64 (bfloat16 bits are the upper half of a float32)."""
    if dtype_name == "bfloat16":
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return array.astype(np.float64)


def recompute_attention(h5, dtype_name):
    """float64 output [seq, head, dim], lse [seq, head] and the largest softmax weight of each
    row, computed with numpy from the stored inputs."""
    query = as_float64(raw_view(h5["inputs/query"]), dtype_name)
    keys = as_float64(raw_view(h5["inputs/key_cache"]), dtype_name)  # [blk, kvh, d/x, slot, x]
    values = as_float64(raw_view(h5["inputs/value_cache"]), dtype_name)  # [blk, kvh, d, slot]
    table = h5["inputs/block_table"][()]
    lengths = h5["inputs/context_lens"][()]
    slopes = h5["inputs/alibi_slopes"][()].astype(np.float64) if "inputs/alibi_slopes" in h5 else None
    scale = float(np.float32(h5.attrs["scale"]))
    num_seqs, num_heads, head_size = query.shape
    num_kv_heads, block_size = keys.shape[1], keys.shape[3]
    out = np.zeros(query.shape)
    lse = np.zeros((num_seqs, num_heads))
    peaks = []
    for s in range(num_seqs):
        tokens = np.arange(lengths[s])
        blocks = table[s, tokens // block_size]
        slots = tokens % block_size
        k = keys[blocks, :, :, slots, :].reshape(len(tokens), num_kv_heads, head_size)
        v = values[blocks, :, :, slots]  # [token, kvh, dim]
        for h in range(num_heads):
            kv = h // (num_heads // num_kv_heads)
            logits = scale * (k[:, kv, :] @ query[s, h])
            if slopes is not None:
                logits = logits + slopes[h] * (tokens - lengths[s] + 1)
            top = logits.max()
            weights = np.exp(logits - top)
            total = weights.sum()
            out[s, h] = (weights / total) @ v[:, kv, :]
            lse[s, h] = top + np.log(total)
            peaks.append(weights.max() / total)
    return out, lse, peaks


def replay_copy(h5, family):
    """The expected output buffers of a copy case, replayed with numpy on raw stored values."""
    slots = h5["inputs/slot_mapping"][()]
    if family == "gather_cached_kv":
        keys, values = raw_view(h5["inputs/key_cache"]), raw_view(h5["inputs/value_cache"])
        results = {}
        for name in ("key", "value"):
            stored = h5["inputs/" + name]
            flat = np.array(stored[()]).reshape(-1).copy()
            view = np.lib.stride_tricks.as_strided(
                flat, shape=[int(v) for v in stored.attrs["logical_shape"]],
                strides=[int(v) * flat.itemsize for v in stored.attrs["strides"]])
            for t, slot in enumerate(slots):
                if slot < 0:
                    continue
                block, offset = divmod(int(slot), keys.shape[3])
                cache = keys[block, :, :, offset, :] if name == "key" else values[block, :, :, offset]
                view[t] = cache.reshape(view.shape[1:])
            results["expected/" + name] = flat
        return results
    results = {}
    for name in ("key", "value"):
        stored = h5["inputs/%s_cache" % name]
        flat = np.array(stored[()]).reshape(-1).copy()
        view = np.lib.stride_tricks.as_strided(
            flat, shape=[int(v) for v in stored.attrs["logical_shape"]],
            strides=[int(v) * flat.itemsize for v in stored.attrs["strides"]])
        rows = raw_view(h5["inputs/" + name])
        block_size = view.shape[3]
        for t, slot in enumerate(slots):
            if slot < 0:
                continue
            block, offset = divmod(int(slot), block_size)
            if name == "key":
                view[block, :, :, offset, :] = rows[t].reshape(view.shape[1], view.shape[2], view.shape[4])
            else:
                view[block, :, :, offset] = rows[t]
        results["expected/%s_cache" % name] = flat
    return results


def recompute(h5, entry, path):
    """Problems found by recomputing the expected outputs with numpy; prints the softmax peak."""
    problems = []
    if entry["family"] == "paged_attention":
        out, lse, peaks = recompute_attention(h5, entry["dtype"])
        for name, mine in (("expected/out_f64", out), ("expected/lse", lse)):
            stored = h5[name][()]
            bound = 1e-10 * np.abs(stored).max()
            worst = np.abs(mine - stored).max()
            if not worst <= bound:
                problems.append(f"{path}: {name}: numpy differs by {worst:.3g} (bound {bound:.3g})")
        print(f"     softmax peak weight: min {min(peaks):.3f}, median "
              f"{float(np.median(peaks)):.3f}, max {max(peaks):.3f}")
        return problems
    for name, mine in replay_copy(h5, entry["family"]).items():
        stored = np.array(h5[name][()]).reshape(-1)
        if mine.tobytes() != stored.tobytes():
            differing = int(np.count_nonzero(mine.view(np.uint8) != stored.view(np.uint8)))
            problems.append(f"{path}: {name}: numpy replay differs in {differing} bytes")
    return problems


def check_case(directory, entry, schema_version):
    """Returns the problems found in one case's file."""
    path = os.path.join(directory, entry["file"])
    problems = []
    with open(path, "rb") as handle:
        file_sha = hashlib.sha256(handle.read()).hexdigest()
    if file_sha != entry["file_sha256"]:
        problems.append(f"{path}: file SHA-256 {file_sha} != manifest {entry['file_sha256']}")
    with h5py.File(path, "r") as h5:
        if text(h5.attrs["case_name"]) != entry["name"]:
            problems.append(f"{path}: case_name {text(h5.attrs['case_name'])!r}")
        if int(h5.attrs["schema_version"]) != schema_version:
            problems.append(f"{path}: schema_version {h5.attrs['schema_version']}")
        if text(h5.attrs["family"]) != entry["family"] or text(h5.attrs["dtype"]) != entry["dtype"]:
            problems.append(f"{path}: family/dtype attributes differ from the manifest")
        found = []
        h5.visititems(lambda name, obj: found.append(name) if isinstance(obj, h5py.Dataset) else None)
        if sorted(found) != sorted(entry["datasets"]):
            problems.append(f"{path}: datasets {sorted(found)} != manifest {sorted(entry['datasets'])}")
        for name, want in entry["datasets"].items():
            if name not in h5:
                continue
            dataset = h5[name]
            where = f"{path}: {name}"
            expected_dtype = NUMPY_DTYPES[want["dtype"]]
            if dataset.dtype != expected_dtype:
                problems.append(f"{where}: h5py dtype {dataset.dtype.str} != {expected_dtype.str}")
            if text(dataset.attrs.get("dtype", b"")) != want["dtype"]:
                problems.append(f"{where}: dtype attribute {dataset.attrs.get('dtype')!r}")
            if list(dataset.shape) != want["shape"]:
                problems.append(f"{where}: shape {list(dataset.shape)} != {want['shape']}")
            data = dataset[()]
            digest = hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest()
            if digest != want["sha256"] or digest != text(dataset.attrs["sha256"]):
                problems.append(f"{where}: SHA-256 {digest} != manifest {want['sha256']}")
            if "logical_shape" in dataset.attrs:
                # A strided tensor: its logical view must fit inside the stored buffer.
                shape = [int(v) for v in dataset.attrs["logical_shape"]]
                strides = [int(v) for v in dataset.attrs["strides"]]
                last = sum((n - 1) * s for n, s in zip(shape, strides))
                if last + 1 > data.size:
                    problems.append(f"{where}: logical view reaches element {last} of {data.size}")
        if not problems:
            problems.extend(recompute(h5, entry, path))
    return problems


def main(argv):
    if len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    directory = argv[1] if len(argv) == 2 else "fixtures/golden"
    manifest_path = os.path.join(directory, "MANIFEST.json")
    try:
        with open(manifest_path, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, ValueError) as error:
        print(f"{manifest_path}: {error}", file=sys.stderr)
        return 2
    problems = []
    for entry in manifest["cases"]:
        print(entry["name"])
        try:
            found = check_case(directory, entry, manifest["schema_version"])
        except (OSError, KeyError) as error:
            found = [f"{os.path.join(directory, entry['file'])}: {error}"]
        problems.extend(found)
        print("     " + ("ok" if not found else "FAIL"))
    for problem in problems:
        print(problem)
    total = sum(entry["file_bytes"] for entry in manifest["cases"])
    print(f"{len(manifest['cases'])} fixtures, {total} bytes, h5py {h5py.__version__}: "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
