"""Bad arguments raise TypeError (kind or dtype) or ValueError (shape or value) naming the
argument, before any work."""
import numpy as np
import pytest

import numpy_kernels as nk
import pagecheck

ref = pagecheck.reference


@pytest.fixture
def args():
    # 2 sequences, GQA 4/2, head 64, block 16: contexts 20 and 33 use 2 and 3 blocks.
    return nk.attention_problem(np.random.default_rng(9), "float16", [20, 33], 4, 2, 64, 16)


@pytest.fixture
def copy_args():
    return nk.copy_problem(np.random.default_rng(10), "float16", 8, 2, 64, 16, 2, 1)


def with_(args, **changes):
    return dict(args, **changes)


ATTENTION_ERRORS = [
    # (description, changes(args) -> dict of replaced arguments, exception, message regex)
    ("query 2-D", lambda a: {"query": a["query"][0]}, ValueError,
     r"query: expected 3 dimensions \[num_seqs, num_heads, head_size\], got shape \(4, 64\)"),
    ("key dtype", lambda a: {"key_cache": a["key_cache"].astype(np.float32), "dtype": None},
     TypeError, "key_cache: dtype float32 differs from query's float16"),
    ("float64 query", lambda a: {"query": a["query"].astype(np.float64), "dtype": None},
     TypeError, "query: dtype float64 is not a storage dtype"),
    ("uint16 without dtype", lambda a: {"query": a["query"].view(np.uint16), "dtype": None},
     TypeError, "query: uint16 arrays are taken as bfloat16 bits only with dtype='bfloat16'"),
    ("dtype disagrees", lambda a: {"dtype": "float32"}, TypeError,
     "query: array dtype float16 does not match dtype='float32'"),
    ("unknown dtype", lambda a: {"dtype": "float8"}, ValueError, "dtype: .*float8"),
    ("x wrong", lambda a: {"key_cache": a["key_cache"].reshape(a["key_cache"].shape[:2] + (
        16, 16, 4))}, ValueError, "key_cache: last dimension is 4, but x = 16 bytes / element"),
    ("value shape", lambda a: {"value_cache": a["value_cache"][:, :, :32, :]}, ValueError,
     r"value_cache: expected shape \(\d+, 2, 64, 16\)"),
    ("head size", lambda a: {"query": a["query"][:, :, :32]}, ValueError,
     "key_cache: .* head_size of the tokens is 32"),
    ("table rows", lambda a: {"block_table": a["block_table"][:1]}, ValueError,
     r"block_table: expected shape \(2, 4\) \[num_seqs, max_blocks_per_seq\], got \(1, 4\)"),
    ("table float", lambda a: {"block_table": a["block_table"].astype(np.float32)}, TypeError,
     "block_table: expected integers, got dtype float32"),
    ("block out of range", lambda a: {"block_table": np.where(
        np.arange(4) == 1, 99, a["block_table"])}, ValueError,
     r"block_table\[0\]\[1\] = 99 is outside \[0, num_blocks"),
    ("table int32 overflow", lambda a: {"block_table": a["block_table"].astype(np.int64) + 2**32},
     ValueError, r"block_table\[0\]\[0\] = \d+ does not fit in int32"),
    ("context too long", lambda a: {"context_lens": np.array([20, 65], dtype=np.int32)},
     ValueError, r"context_lens\[1\] = 65 exceeds max_blocks_per_seq \* block_size = 64"),
    ("context negative", lambda a: {"context_lens": [-1, 33]}, ValueError,
     r"context_lens\[0\] = -1 must not be negative"),
    ("context shape", lambda a: {"context_lens": [20]}, ValueError,
     r"context_lens: expected shape \(2,\) \[num_seqs\], got \(1,\)"),
    ("alibi length", lambda a: {"alibi_slopes": np.ones(3, dtype=np.float32)}, ValueError,
     r"alibi_slopes: expected shape \(4,\) \[num_heads\]"),
    ("heads not multiple", lambda a: {"query": a["query"][:, :3, :]}, ValueError,
     "num_heads = 3 is not a multiple of num_kv_heads = 2"),
    ("scale text", lambda a: {"scale": "big"}, TypeError, "scale: expected a real number"),
    ("query None", lambda a: {"query": None}, TypeError, "query: expected an array, got None"),
    ("query object", lambda a: {"query": object()}, TypeError, "query: dtype object"),
]


@pytest.mark.parametrize("case", ATTENTION_ERRORS, ids=[c[0] for c in ATTENTION_ERRORS])
def test_attention_argument_errors(args, case):
    _, change, error, message = case
    bad = with_(args, **change(args))
    with pytest.raises(error, match=message):
        ref.paged_attention(**bad)
    with pytest.raises(error, match=message):
        pagecheck.compare_attention(**bad, actual=np.zeros((2, 4, 64), dtype=np.float16))


def test_compare_argument_errors(args):
    good = np.zeros((2, 4, 64), dtype=np.float16)
    with pytest.raises(ValueError, match=r"actual: expected shape \(2, 4, 64\)"):
        pagecheck.compare_attention(**args, actual=good[:, :2])
    with pytest.raises(TypeError, match="actual: array dtype float32 does not match dtype="):
        pagecheck.compare_attention(**args, actual=good.astype(np.float32))
    with pytest.raises(TypeError, match="actual: dtype float32 differs from query's float16"):
        pagecheck.compare_attention(**with_(args, dtype=None), actual=good.astype(np.float32))
    with pytest.raises(TypeError, match="reference_lse: expected float64"):
        pagecheck.compare_attention(**args, actual=good, reference_out=np.zeros((2, 4, 64)),
                                    reference_lse=np.zeros((2, 4), dtype=np.float32))
    with pytest.raises(TypeError, match="reference_out: expected float64"):
        pagecheck.compare_attention(**args, actual=good, reference_out=good)
    with pytest.raises(ValueError, match=r"reference_out: expected shape \(2, 4, 64\)"):
        pagecheck.compare_attention(**args, actual=good, reference_out=np.zeros((2, 4, 63)))
    with pytest.raises(ValueError, match="reference_out: the reference output is not finite"):
        pagecheck.compare_attention(**args, actual=good,
                                    reference_out=np.full((2, 4, 64), np.nan))
    with pytest.raises(TypeError, match="model: expected a pagecheck.ToleranceModel"):
        pagecheck.compare_attention(**args, actual=good, model={"precision": "loosest"})


COPY_ERRORS = [
    ("slot out of range", lambda a: {"slot_mapping": np.where(np.arange(8) == 2, 32,
                                                              a["slot_mapping"])},
     ValueError, r"slot_mapping\[2\] = 32 is outside \[-1, num_blocks \* block_size = 32\)"),
    ("slot below -1", lambda a: {"slot_mapping": np.full(8, -2)}, ValueError,
     r"slot_mapping\[0\] = -2 is outside"),
    ("slot count", lambda a: {"slot_mapping": a["slot_mapping"][:5]}, ValueError,
     r"slot_mapping: expected shape \(8,\) \[num_tokens\], got \(5,\)"),
    ("value rows", lambda a: {"value": a["value"][:5]}, ValueError,
     r"value: expected the shape of key \(8, 2, 64\), got \(5, 2, 64\)"),
    ("key heads", lambda a: {"key": a["key"][:, :1], "value": a["value"][:, :1]}, ValueError,
     "key: 1 heads, but the caches have num_kv_heads = 2"),
    ("cache dtype", lambda a: {"value_cache": a["value_cache"].astype(np.float32),
                                    "dtype": None}, TypeError,
     "value_cache: dtype float32 differs from key's float16"),
    ("slot float", lambda a: {"slot_mapping": a["slot_mapping"].astype(np.float64)}, TypeError,
     "slot_mapping: expected integers"),
]


@pytest.mark.parametrize("case", COPY_ERRORS, ids=[c[0] for c in COPY_ERRORS])
def test_copy_argument_errors(copy_args, case):
    _, change, error, message = case
    bad = with_(copy_args, **change(copy_args))
    for fn in (ref.gather_cached_kv, ref.reshape_and_cache):
        with pytest.raises(error, match=message):
            fn(**bad)


def test_storage_helper_errors():
    with pytest.raises(ValueError, match="dtype: .*int8"):
        ref.to_storage([1.0], "int8")
    with pytest.raises(TypeError, match="values: expected real numbers"):
        ref.to_storage(np.array(["a"]), "float16")
    with pytest.raises(TypeError, match="array: uint16 arrays are taken as bfloat16 bits"):
        ref.to_float64(np.zeros(3, dtype=np.uint16))
