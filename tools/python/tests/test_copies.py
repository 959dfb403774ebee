"""pagecheck.reference.gather_cached_kv / reshape_and_cache against numpy implementations,
bit for bit."""
import numpy as np
import pytest

import numpy_kernels as nk
import pagecheck

SHAPES = [("float16", 40, 2, 128, 16, 6, 5), ("bfloat16", 30, 4, 64, 8, 5, 3),
          ("float32", 20, 1, 256, 32, 2, 0)]


def bits(array):
    """The raw bits of a storage array (so NaN payloads and -0 compare exactly)."""
    return np.ascontiguousarray(array).view(np.dtype(f"u{array.dtype.itemsize}"))


@pytest.mark.parametrize("shape", SHAPES, ids=[s[0] for s in SHAPES])
def test_gather_matches_numpy_bit_for_bit(shape):
    args = nk.copy_problem(np.random.default_rng(5), *shape)
    before = {k: v.copy() for k, v in args.items() if isinstance(v, np.ndarray)}
    key, value = pagecheck.reference.gather_cached_kv(**args)
    want_key, want_value = nk.numpy_gather(args["key"], args["value"], args["key_cache"],
                                           args["value_cache"], args["slot_mapping"])
    assert key.dtype == args["key"].dtype and key.shape == args["key"].shape
    assert np.array_equal(bits(key), bits(want_key))
    assert np.array_equal(bits(value), bits(want_value))
    for name, array in before.items():  # the arguments are not modified
        assert np.array_equal(bits(array), bits(args[name])), name


@pytest.mark.parametrize("shape", SHAPES, ids=[s[0] for s in SHAPES])
def test_reshape_matches_numpy_bit_for_bit(shape):
    args = nk.copy_problem(np.random.default_rng(6), *shape)
    key_cache, value_cache = pagecheck.reference.reshape_and_cache(**args)
    want_k, want_v = nk.numpy_reshape(args["key"], args["value"], args["key_cache"],
                                      args["value_cache"], args["slot_mapping"])
    assert key_cache.shape == args["key_cache"].shape
    assert np.array_equal(bits(key_cache), bits(want_k))
    assert np.array_equal(bits(value_cache), bits(want_v))
    assert not np.array_equal(bits(key_cache), bits(args["key_cache"]))


def test_copies_keep_nan_payloads_and_negative_zero():
    args = nk.copy_problem(np.random.default_rng(7), "float16", 4, 1, 64, 8, 2, 0)
    args["key"][0, 0, :3] = np.array([0x7E01, 0xFC00, 0x8000], dtype=np.uint16).view(np.float16)
    key_cache, _ = pagecheck.reference.reshape_and_cache(**args)
    key, _ = pagecheck.reference.gather_cached_kv(**dict(args, key_cache=key_cache))
    assert list(bits(key)[0, 0, :3]) == [0x7E01, 0xFC00, 0x8000]


def test_padded_rows_keep_their_strides_and_gaps():
    args = nk.copy_problem(np.random.default_rng(8), "float16", 10, 2, 64, 16, 2, 2)
    padded = np.full((10, 2, 72), np.nan, dtype=np.float16)[:, :, :64]
    padded[...] = args["key"]
    key, _ = pagecheck.reference.gather_cached_kv(**dict(args, key=padded))
    assert key.strides == padded.strides
    want, _ = nk.numpy_gather(args["key"], args["value"], args["key_cache"],
                              args["value_cache"], args["slot_mapping"])
    assert np.array_equal(bits(key), bits(want))
    # The gaps after each row's 64 elements come back as they were (NaN); rows 0..8 with
    # their gaps lie inside the buffer.
    rows = np.lib.stride_tricks.as_strided(key, shape=(9, 2, 72), strides=key.strides,
                                           writeable=False)
    assert np.all(np.isnan(rows[:, :, 64:]))
