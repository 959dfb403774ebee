#!/usr/bin/python3
"""Interop check: read every golden fixture with h5py and check it against MANIFEST.json.

Usage: /usr/bin/python3 tools/check_golden_h5py.py [fixtures/golden]

For every case of the manifest: the file's SHA-256 and every dataset's dtype, shape and SHA-256
(of the bytes h5py returns) match the manifest and the dataset's own `sha256` attribute;
float32 / float64 / int32 / int64 datasets read as themselves, datasets whose dtype the dtype
table stores as bits (bfloat16, fp8, float16 where the table says so) as unsigned integers of
their width with attribute dtype naming the dtype; no dataset is missing or extra; the root
attributes name the case and its schema version (2: docs/fixtures.md).
Then, as an oracle independent of the C++ code, numpy recomputes every expected output from
the stored inputs through the documented layouts (cache descriptor, ragged batch, features):
copies bit for bit, attention within 1e-10 of the largest |out_f64| (and lse likewise); it also
prints how peaked each case's softmax is.
Exit 0 when everything matches, 1 otherwise (each problem printed), 2 on bad usage.
"""
import hashlib
import json
import os
import sys

import h5py
import numpy as np

FIXED_DTYPES = {
    "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"),
    "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"),
}
BITS_DTYPES = {"float16": np.dtype("<u2"), "bfloat16": np.dtype("<u2"),
               "fp8_e4m3": np.dtype("u1"), "fp8_e5m2": np.dtype("u1")}


def expected_numpy_dtype(name, dataset):
    """The numpy dtype h5py must give a dataset of element type `name`."""
    if name in FIXED_DTYPES:
        return FIXED_DTYPES[name]
    if name == "float16" and dataset.dtype.kind == "f":  # a table storing float16 as IEEE half
        return np.dtype("<f2")
    return BITS_DTYPES[name]


def text(value):
    """Attribute value as str (h5py returns fixed-length strings as bytes)."""
    return value.decode("ascii") if isinstance(value, (bytes, np.bytes_)) else str(value)


def strided(flat, shape, strides, offset=0, writeable=False):
    """A strided view of a flat buffer (shape and strides in elements)."""
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=[int(v) for v in shape],
        strides=[int(v) * flat.itemsize for v in strides], writeable=writeable)


def raw_view(dataset, flat=None, writeable=False):
    """The logical strided view of a stored tensor in its stored dtype (bits as unsigned)."""
    if flat is None:
        flat = np.array(dataset[()]).reshape(-1)
    return strided(flat, dataset.attrs["logical_shape"], dataset.attrs["strides"],
                   writeable=writeable)


def canonical(view, axes):
    """A cache view stored in its kind's engine shape (attribute ``axes``, e.g.
    "block,slot,head,dim" for NHD) transposed to [block, head, slot, dim] (4-D) or
    [block, head, group, slot, dim] (5-D, x-split keys)."""
    names = (axes.decode() if isinstance(axes, bytes) else str(axes)).split(",")
    order = (["block", "head", "group", "slot", "dim"] if len(names) == 5
             else ["block", "head", "slot", "dim"])
    return view.transpose([names.index(n) for n in order])


def cache_views(h5, group, writeable=False):
    """(flat buffers, key view, value view) of a group's cache tensors (combined: one buffer),
    the views in the canonical axis order of canonical()."""
    key_set = h5[group + "/key_cache"]
    key_flat = np.array(key_set[()]).reshape(-1).copy()
    key = canonical(raw_view(key_set, key_flat, writeable), key_set.attrs["axes"])
    if "value_logical_shape" in key_set.attrs:  # K and V halves of one allocation
        value = strided(key_flat, key_set.attrs["value_logical_shape"],
                        key_set.attrs["value_strides"], int(key_set.attrs["value_offset"]),
                        writeable)
        return {group + "/key_cache": key_flat}, key, canonical(value, key_set.attrs["value_axes"])
    value_set = h5[group + "/value_cache"]
    value_flat = np.array(value_set[()]).reshape(-1).copy()
    return ({group + "/key_cache": key_flat, group + "/value_cache": value_flat}, key,
            canonical(raw_view(value_set, value_flat, writeable), value_set.attrs["axes"]))


def slot_rows(view, blocks, slots):
    """[tokens, kv_heads, head_size] of a cache view at (block, slot) pairs: 5-D views split the
    head dimension ([blk, kvh, d / x, slot, x]), 4-D ones do not ([blk, kvh, slot, d])."""
    if view.ndim == 5:
        return view[blocks, :, :, slots, :].reshape(len(blocks), view.shape[1], -1)
    return view[blocks, :, slots, :]


def block_size_of(view):
    return view.shape[3] if view.ndim == 5 else view.shape[2]


def fp8_values(codes, exponent_bits, bias, e4m3):
    """The exact values of fp8 codes (OCP E4M3 / E5M2)."""
    codes = codes.astype(np.int64)
    mantissa_bits = 7 - exponent_bits
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exponent = (codes >> mantissa_bits) & ((1 << exponent_bits) - 1)
    mantissa = codes & ((1 << mantissa_bits) - 1)
    normal = (1 + mantissa / 2.0 ** mantissa_bits) * 2.0 ** (exponent - bias)
    subnormal = mantissa / 2.0 ** mantissa_bits * 2.0 ** (1 - bias)
    values = sign * np.where(exponent == 0, subnormal, normal)
    top = (1 << exponent_bits) - 1
    if e4m3:
        values = np.where((exponent == top) & (mantissa == 7), np.nan, values)
    else:
        values = np.where(exponent == top, np.where(mantissa == 0, sign * np.inf, np.nan), values)
    return values


def as_float64(array, dtype_name):
    """Stored values as float64 (bits of bfloat16 are the upper half of a float32)."""
    if dtype_name == "bfloat16":
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype_name == "float16" and array.dtype.kind == "u":
        return np.ascontiguousarray(array).view(np.float16).astype(np.float64)
    if dtype_name == "fp8_e4m3":
        return fp8_values(array, 4, 7, True)
    if dtype_name == "fp8_e5m2":
        return fp8_values(array, 5, 15, False)
    return array.astype(np.float64)


def scales(h5, name, num_kv_heads):
    """[num_kv_heads] fp8 scales of K or V (ones without scales)."""
    if "inputs/" + name not in h5:
        return np.ones(num_kv_heads)
    return np.broadcast_to(h5["inputs/" + name][()].astype(np.float64), (num_kv_heads,))


def recompute_attention(h5, dtype_name):
    """float64 output [row, head, dim], lse [row, head] and the largest softmax weight of each
    row, computed with numpy from the stored inputs by the rules of docs/reference.md."""
    cache_dtype = text(h5.attrs["cache_dtype"])
    query = as_float64(raw_view(h5["inputs/query"]), dtype_name)
    _, key_view, value_view = cache_views(h5, "inputs")
    table = h5["inputs/block_table"][()]
    lengths = h5["inputs/context_lens"][()]
    starts = (h5["inputs/query_start"][()] if "inputs/query_start" in h5
              else np.arange(len(lengths) + 1))
    slopes = h5["inputs/alibi_slopes"][()].astype(np.float64) if "inputs/alibi_slopes" in h5 else None
    sinks = h5["inputs/sinks"][()].astype(np.float64) if "inputs/sinks" in h5 else None
    window = int(h5.attrs["feature_window"])
    cap = float(np.float32(h5.attrs["feature_soft_cap"]))
    causal = int(h5.attrs["feature_causal"]) != 0
    scale = float(np.float32(h5.attrs["scale"]))
    num_rows, num_heads, head_size = query.shape
    num_kv_heads, block_size = key_view.shape[1], block_size_of(key_view)
    k_scale, v_scale = scales(h5, "k_scale", num_kv_heads), scales(h5, "v_scale", num_kv_heads)
    out = np.zeros(query.shape)
    lse = np.full((num_rows, num_heads), -np.inf)
    peaks = []
    for s in range(len(lengths)):
        tokens = np.arange(lengths[s])
        blocks, slots = table[s, tokens // block_size], tokens % block_size
        k = as_float64(slot_rows(key_view, blocks, slots), cache_dtype) * k_scale[None, :, None]
        v = as_float64(slot_rows(value_view, blocks, slots), cache_dtype) * v_scale[None, :, None]
        q_len = starts[s + 1] - starts[s]
        for i in range(q_len):
            row, position = starts[s] + i, lengths[s] - q_len + i
            attended = np.ones(len(tokens), dtype=bool)
            if causal:
                attended &= tokens <= position
            if window > 0:
                attended &= tokens > position - window
            if not attended.any():
                continue
            for h in range(num_heads):
                kv = h // (num_heads // num_kv_heads)
                logits = scale * (k[attended, kv, :] @ query[row, h])
                if cap > 0:
                    logits = cap * np.tanh(logits / cap)
                if slopes is not None:
                    logits = logits + slopes[h] * (tokens[attended] - position)
                top = logits.max() if sinks is None else max(logits.max(), sinks[h])
                weights = np.exp(logits - top)
                total = weights.sum() + (0.0 if sinks is None else np.exp(sinks[h] - top))
                out[row, h] = (weights / total) @ v[attended, kv, :]
                lse[row, h] = top + np.log(total)
                peaks.append(weights.max() / total)
    return out, lse, peaks


def replay_copy(h5, family):
    """The expected output buffers of a copy case, replayed with numpy on raw stored values
    (raw copies only: a converting copy of an fp8 cache is left to the C++ reference)."""
    slots = h5["inputs/slot_mapping"][()]
    if text(h5.attrs["cache_dtype"]) != text(h5.attrs["dtype"]):
        return None
    if family == "gather_cached_kv":
        _, keys, values = cache_views(h5, "inputs")
        results = {}
        for name, cache in (("key", keys), ("value", values)):
            stored = h5["inputs/" + name]
            flat = np.array(stored[()]).reshape(-1).copy()
            view = raw_view(stored, flat, writeable=True)
            for t, slot in enumerate(slots):
                if slot < 0:
                    continue
                block, offset = divmod(int(slot), block_size_of(keys))
                view[t] = slot_rows(cache, [block], [offset])[0]
            results["expected/" + name] = flat
        return results
    flats, keys, values = cache_views(h5, "inputs", writeable=True)
    for name, cache in (("key", keys), ("value", values)):
        rows = raw_view(h5["inputs/" + name])
        block_size = block_size_of(cache)
        for t, slot in enumerate(slots):
            if slot < 0:
                continue
            block, offset = divmod(int(slot), block_size)
            if cache.ndim == 5:
                cache[block, :, :, offset, :] = rows[t].reshape(cache.shape[1], cache.shape[2],
                                                                cache.shape[4])
            else:
                cache[block, :, offset, :] = rows[t]
    return {"expected/" + path.split("/", 1)[1]: flat for path, flat in flats.items()}


def recompute(h5, entry, path):
    """Problems found by recomputing the expected outputs with numpy; prints the softmax peak."""
    problems = []
    if entry["family"] == "paged_attention":
        out, lse, peaks = recompute_attention(h5, entry["dtype"])
        for name, mine in (("expected/out_f64", out), ("expected/lse", lse)):
            stored = h5[name][()]
            finite = np.isfinite(stored)
            bound = 1e-10 * np.abs(stored[finite]).max(initial=0.0)
            if not np.array_equal(np.isfinite(mine), finite) or not np.array_equal(
                    mine[~finite], stored[~finite]):
                problems.append(f"{path}: {name}: numpy's infinities differ from the stored ones")
                continue
            worst = np.abs(mine[finite] - stored[finite]).max(initial=0.0)
            if not worst <= bound:
                problems.append(f"{path}: {name}: numpy differs by {worst:.3g} (bound {bound:.3g})")
        if peaks:
            print(f"     softmax peak weight: min {min(peaks):.3f}, median "
                  f"{float(np.median(peaks)):.3f}, max {max(peaks):.3f}")
        return problems
    replayed = replay_copy(h5, entry["family"])
    if replayed is None:
        print("     (a converting fp8 copy: not replayed with numpy)")
        return problems
    for name, mine in replayed.items():
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
            expected_dtype = expected_numpy_dtype(want["dtype"], dataset)
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
