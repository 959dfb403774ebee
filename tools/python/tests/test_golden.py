"""pagecheck.golden.load against h5py's view of every committed golden, and the reference on
the loaded inputs reproducing the recorded outputs."""
import json
import os
import shutil

import h5py
import numpy as np
import pytest

import pagecheck

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "golden")
with open(os.path.join(GOLDEN_DIR, "MANIFEST.json")) as f:
    CASES = [c["file"] for c in json.load(f)["cases"]]


def text(value):
    return value.decode("ascii") if isinstance(value, (bytes, np.bytes_)) else value


def same_attr(ours, theirs):
    if isinstance(ours, np.ndarray) or isinstance(theirs, np.ndarray):
        return np.array_equal(np.asarray(ours), np.asarray(theirs))
    return ours == text(theirs)


def bits(array):
    return np.ascontiguousarray(array).view(np.dtype(f"u{array.dtype.itemsize}"))


@pytest.mark.parametrize("file", CASES)
def test_load_equals_h5py(file):
    path = os.path.join(GOLDEN_DIR, file)
    g = pagecheck.golden.load(path)
    with h5py.File(path, "r") as h5:
        assert set(g.attrs) == set(h5.attrs)
        for name, value in h5.attrs.items():
            assert same_attr(g.attrs[name], value), name
        assert g.name == text(h5.attrs["case_name"]) and g.family == text(h5.attrs["family"])
        assert g.dtype == text(h5.attrs["dtype"]) and g.seed == int(h5.attrs["seed"])
        paths = []
        h5.visititems(lambda p, o: paths.append(p) if isinstance(o, h5py.Dataset) else None)
        assert sorted(paths) == sorted(g.stored)
        for p in paths:
            stored = h5[p][()]
            assert g.stored[p].dtype == stored.dtype and g.stored[p].shape == stored.shape, p
            assert np.array_equal(bits(g.stored[p]), bits(stored)), p
            for name, value in h5[p].attrs.items():
                assert same_attr(g.dataset_attrs[p][name], value), (p, name)
            if "logical_shape" in h5[p].attrs:
                flat = stored.reshape(-1)
                view = np.lib.stride_tricks.as_strided(
                    flat, shape=h5[p].attrs["logical_shape"],
                    strides=[s * flat.itemsize for s in h5[p].attrs["strides"]])
                assert g[p].shape == view.shape and g[p].strides == view.strides, p
                assert np.array_equal(bits(g[p]), bits(view)), p


@pytest.mark.parametrize("file", CASES)
def test_reference_on_loaded_inputs_reproduces_the_golden(file):
    g = pagecheck.golden.load(os.path.join(GOLDEN_DIR, file))
    if g.family == "paged_attention":
        out, lse = pagecheck.reference.paged_attention(**g.inputs())
        scale = np.abs(g["expected/out_f64"]).max()
        assert np.abs(out - g["expected/out_f64"]).max() <= 1e-12 * scale
        assert np.abs(lse - g["expected/lse"]).max() <= 1e-12 * np.abs(g["expected/lse"]).max()
        assert np.array_equal(bits(pagecheck.reference.to_storage(out, g.dtype)),
                              bits(g["expected/out"]))
        result = pagecheck.compare_attention(**g.inputs(), actual=g["expected/out"],
                                             reference_out=out)
        assert result.passed, result.description
    elif g.family == "gather_cached_kv":
        key, value = pagecheck.reference.gather_cached_kv(**g.inputs())
        assert np.array_equal(bits(key), bits(g["expected/key"]))
        assert np.array_equal(bits(value), bits(g["expected/value"]))
    else:
        key_cache, value_cache = pagecheck.reference.reshape_and_cache(**g.inputs())
        assert np.array_equal(bits(key_cache), bits(g["expected/key_cache"]))
        assert np.array_equal(bits(value_cache), bits(g["expected/value_cache"]))


def test_missing_golden_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.h5"):
        pagecheck.golden.load(tmp_path / "nope.h5")


def test_corrupt_golden_names_the_file_and_dataset(tmp_path):
    source = os.path.join(GOLDEN_DIR, "pa_gqa_f16_h128_b16.h5")
    truncated = tmp_path / "truncated.h5"
    with open(source, "rb") as f:
        truncated.write_bytes(f.read()[:2000])
    with pytest.raises(ValueError, match="truncated.h5"):
        pagecheck.golden.load(truncated)
    edited = tmp_path / "edited.h5"
    shutil.copy(source, edited)
    with h5py.File(edited, "r+") as h5:
        h5["inputs/context_lens"][0] = 5  # data no longer matches its sha256 attribute
    with pytest.raises(ValueError, match="edited.h5.*inputs/context_lens"):
        pagecheck.golden.load(edited)
