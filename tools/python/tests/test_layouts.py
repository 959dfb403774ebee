"""The problem vocabulary from Python: page layouts (x-split, NHD, HND), fp8 caches with
scales, multi-token queries and attention features, and arrays whose strides the reference
cannot use (read as a packed copy, the same result)."""
import numpy as np
import pytest

import numpy_kernels as nk
import pagecheck

ref = pagecheck.reference


@pytest.fixture
def args():
    # 3 sequences, GQA 4/2, head 64, block 16.
    return nk.attention_problem(np.random.default_rng(21), "float16", [20, 33, 5], 4, 2, 64, 16)


def hnd(args):
    """The x-split caches of `args` as [num_blocks, num_kv_heads, block_size, head_size]."""
    k, v = args["key_cache"], args["value_cache"]
    nb, kv, groups, bs, x = k.shape
    key = k.transpose(0, 1, 3, 2, 4).reshape(nb, kv, bs, groups * x)
    return np.ascontiguousarray(key), np.ascontiguousarray(v.transpose(0, 1, 3, 2))


def test_every_page_layout_gives_the_same_result(args):
    x_split = ref.paged_attention(**args)
    key, value = hnd(args)
    as_hnd = ref.paged_attention(**dict(args, key_cache=key, value_cache=value, kind="hnd"))
    nhd_key = np.ascontiguousarray(key.transpose(0, 2, 1, 3))
    nhd_value = np.ascontiguousarray(value.transpose(0, 2, 1, 3))
    as_nhd = ref.paged_attention(**dict(args, key_cache=nhd_key, value_cache=nhd_value, kind="nhd"))
    for got in (as_hnd, as_nhd):
        assert np.array_equal(got.out, x_split.out) and np.array_equal(got.lse, x_split.lse)
    with pytest.raises(ValueError, match="kind: cache kind: unknown name 'nch'"):
        ref.paged_attention(**dict(args, kind="nch"))
    with pytest.raises(ValueError, match=r"value_cache: expected shape .* \[num_blocks, "
                                         r"num_kv_heads, block_size, head_size\]"):
        ref.paged_attention(**dict(args, key_cache=key, value_cache=value[:, :, :8], kind="hnd"))


def test_transposed_arrays_fall_back_to_a_packed_copy(args):
    """Arrays numpy can stride but a token layout cannot describe (heads outside tokens) are
    read packed instead of raising ValueError."""
    expected = ref.paged_attention(**args)
    q = args["query"]
    transposed = np.ascontiguousarray(q.transpose(1, 0, 2)).transpose(1, 0, 2)
    assert transposed.strides[0] < transposed.strides[1]  # expressible, not a token layout
    got = ref.paged_attention(**dict(args, query=transposed))
    assert np.array_equal(got.out, expected.out)
    # A cache whose heads lie outside its blocks is a valid (strided) cache layout.
    k = args["key_cache"]
    heads_outside = np.ascontiguousarray(k.transpose(1, 0, 2, 3, 4)).transpose(1, 0, 2, 3, 4)
    got = ref.paged_attention(**dict(args, key_cache=heads_outside))
    assert np.array_equal(got.out, expected.out)
    # Copies too: the same rows come back.
    copy = nk.copy_problem(np.random.default_rng(22), "float16", 8, 2, 64, 16, 2, 1)
    key_t = np.ascontiguousarray(copy["key"].transpose(1, 0, 2)).transpose(1, 0, 2)
    plain = ref.reshape_and_cache(**copy)
    strided = ref.reshape_and_cache(**dict(copy, key=key_t))
    assert np.array_equal(plain[0], strided[0]) and np.array_equal(plain[1], strided[1])


def fp8_caches(args, kv_dtype, k_scale, v_scale):
    """The caches of `args` in the HND layout as fp8 codes of value / scale (per kv head when
    the scales are arrays), and the values those codes stand for."""
    def encode(cache, scale):
        values = nk.decode(cache, args["dtype"])
        s = np.asarray(scale, dtype=np.float64).reshape(1, -1, 1, 1) if np.ndim(scale) else scale
        codes = ref.to_storage(np.nan_to_num(values / s), kv_dtype)
        return codes, ref.to_float64(codes, dtype=kv_dtype) * s
    key, value = hnd(args)
    return encode(key, k_scale), encode(value, v_scale)


def numpy_hnd_attention(args, key, value):
    """Decode attention in float64 over HND caches of float64 values."""
    q = nk.decode(args["query"], args["dtype"])
    num_heads, group = q.shape[1], q.shape[1] // key.shape[1]
    out = np.zeros(q.shape)
    for s, n in enumerate(args["context_lens"]):
        t = np.arange(int(n))
        blocks = args["block_table"][s, t // key.shape[2]]
        for h in range(num_heads):
            k = key[blocks, h // group, t % key.shape[2], :]
            v = value[blocks, h // group, t % key.shape[2], :]
            logits = args["scale"] * (k @ q[s, h])
            w = np.exp(logits - logits.max())
            out[s, h] = (w @ v) / w.sum()
    return out


@pytest.mark.parametrize("kv_dtype", ["fp8_e4m3", "fp8_e5m2"])
def test_fp8_caches_with_scales(args, kv_dtype):
    k_scale = np.array([0.004, 0.5], dtype=np.float32)  # per kv head, far apart
    v_scale = np.float32(0.01)
    (k_codes, k_values), (v_codes, v_values) = fp8_caches(args, kv_dtype, k_scale, v_scale)
    assert k_codes.dtype == np.uint8
    fp8 = dict(args, key_cache=k_codes, value_cache=v_codes, kind="hnd", kv_dtype=kv_dtype,
               k_scale=k_scale, v_scale=float(v_scale))
    got = ref.paged_attention(**fp8)
    np.testing.assert_allclose(got.out, numpy_hnd_attention(args, k_values, v_values), rtol=0,
                               atol=1e-12)
    # A kernel that applies head 0's scale to every head is far off.
    wrong = ref.paged_attention(**dict(fp8, k_scale=float(k_scale[0])))
    assert np.max(np.abs(wrong.out - got.out)) > 1e-3
    with pytest.raises(TypeError, match="uint8 arrays are taken as fp8 codes only with kv_dtype"):
        ref.paged_attention(**dict(fp8, kv_dtype=None))
    with pytest.raises(ValueError, match="k_scale, v_scale: scales need an fp8 kv_dtype"):
        ref.paged_attention(**dict(args, k_scale=0.5))


def test_reshape_into_an_fp8_cache_quantizes_value_over_scale():
    copy = nk.copy_problem(np.random.default_rng(23), "float16", 6, 2, 64, 16, 2, 1)
    nb = copy["key_cache"].shape[0]
    key_codes = np.zeros((nb, 2, 16, 64), dtype=np.uint8)  # HND: [blocks, heads, slots, dims]
    value_codes = np.zeros((nb, 2, 16, 64), dtype=np.uint8)
    scale = 0.25
    fp8 = dict(copy, key_cache=key_codes, value_cache=value_codes, kind="hnd",
               kv_dtype="fp8_e4m3", k_scale=scale, v_scale=scale)
    key_cache, value_cache = ref.reshape_and_cache(**fp8)

    def rule(row):  # the float32 quotient, then the fp8 code
        return ref.to_storage(np.float32(nk.decode(row, "float16")) / np.float32(scale),
                              "fp8_e4m3")
    live = [(t, int(slot)) for t, slot in enumerate(copy["slot_mapping"]) if slot >= 0]
    for t, slot in live:
        b, o = divmod(slot, 16)
        assert np.array_equal(key_cache[b, :, o, :], rule(copy["key"][t]))
        assert np.array_equal(value_cache[b, :, o, :], rule(copy["value"][t]))
    # ... and a dequantizing gather reads code * scale back, rounded once to float16.
    key, _ = ref.gather_cached_kv(**dict(fp8, key_cache=key_cache, value_cache=value_cache,
                                         dtype="float16", dequantize=True))
    t, slot = live[0]
    b, o = divmod(slot, 16)
    expected = (ref.to_float64(key_cache[b, :, o, :], "fp8_e4m3") * scale).astype(np.float16)
    assert np.array_equal(key[t], expected)


def test_multi_token_queries_and_features(args):
    decode = ref.paged_attention(**args)
    lens = args["context_lens"]
    rows = [3, 1, 5]  # new tokens per sequence (the last ones of each context)
    starts = np.concatenate([[0], np.cumsum(rows)]).astype(np.int32)
    rng = np.random.default_rng(24)
    query = nk.encode(4 * nk.random_values(rng, (starts[-1], 4, 64), "float16"), "float16")
    for s in range(3):  # the last row of each sequence is its decode query
        query[starts[s + 1] - 1] = args["query"][s]
    multi = ref.paged_attention(**dict(args, query=query, query_start=starts))
    assert multi.out.shape == (starts[-1], 4, 64)
    for s in range(3):
        assert np.array_equal(multi.out[starts[s + 1] - 1], decode.out[s])
    # Causal: the first row of sequence 0 attends to fewer tokens than the last.
    full = ref.paged_attention(**dict(args, query=query, query_start=starts, causal=False))
    assert not np.array_equal(full.out[0], multi.out[0])
    assert np.array_equal(full.out[starts[1] - 1], multi.out[starts[1] - 1])
    # A window as long as every context changes nothing; a window of 1 gives the row's own value.
    same = ref.paged_attention(**dict(args, window=int(max(lens))))
    assert np.array_equal(same.out, decode.out)
    # A sink far below the logits changes (almost) nothing; far above, the output goes to 0.
    low = ref.paged_attention(**dict(args, sinks=np.full(4, -1e4, dtype=np.float32)))
    np.testing.assert_allclose(low.out, decode.out, rtol=0, atol=1e-12)
    high = ref.paged_attention(**dict(args, sinks=np.full(4, 1e3, dtype=np.float32)))
    assert np.max(np.abs(high.out)) < 1e-100
    capped = ref.paged_attention(**dict(args, soft_cap=0.5))
    assert not np.array_equal(capped.out, decode.out)
    # A padding row (context 0): zeros, lse -inf.
    padded = ref.paged_attention(**dict(args, context_lens=np.array([20, 0, 5], dtype=np.int32)))
    assert np.all(padded.out[1] == 0) and np.all(np.isneginf(padded.lse[1]))
    assert np.array_equal(padded.out[0], decode.out[0])
