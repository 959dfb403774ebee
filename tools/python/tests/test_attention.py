"""pagecheck.reference.paged_attention and pagecheck.compare_attention against a numpy
implementation of paged attention written here (numpy_kernels.py), with two planted bugs."""
import numpy as np
import pytest

import numpy_kernels as nk
import pagecheck

CASES = {
    # name: (dtype, context_lens, num_heads, num_kv_heads, head_size, block_size, alibi)
    "gqa_f16": ("float16", [37, 100, 16], 8, 2, 128, 16, False),
    "mqa_alibi_bf16": ("bfloat16", [45, 9], 4, 1, 64, 8, True),
    "mha_f32": ("float32", [33, 1, 70], 4, 4, 80, 32, False),
}


def problem(name, seed=1):
    dtype, lens, heads, kv_heads, head_size, block_size, alibi = CASES[name]
    return nk.attention_problem(np.random.default_rng(seed), dtype, lens, heads, kv_heads,
                                head_size, block_size, alibi=alibi)


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_implementation_passes(name):
    args = problem(name)
    actual = nk.numpy_paged_attention(**args)
    result = pagecheck.compare_attention(**args, actual=actual)
    assert result.passed, result.description
    assert result.violations == 0
    assert 0 <= result.max_ratio <= 1
    assert result.count == actual.size
    assert result.description.startswith(f"all {actual.size} elements within tolerance")


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_agrees_with_numpy_in_float64(name):
    args = problem(name)
    out, lse = pagecheck.reference.paged_attention(**args)
    expected = nk.numpy_paged_attention(**args, rounded=False)
    assert out.dtype == np.float64 and lse.dtype == np.float64
    assert out.shape == expected.shape and lse.shape == expected.shape[:2]
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)
    assert np.all(np.isfinite(lse))


@pytest.mark.parametrize("name", ["gqa_f16", "mqa_alibi_bf16"])
def test_planted_bug_skipped_last_partial_block_is_caught(name):
    args = problem(name)
    assert any(n % args["key_cache"].shape[3] for n in args["context_lens"])
    actual = nk.numpy_paged_attention(**args, bug="skip_partial_block")
    result = pagecheck.compare_attention(**args, actual=actual)
    assert not result.passed
    assert result.violations > 0 and result.max_ratio > 1
    assert " elements over tolerance; worst (row,head,dim)=" in result.description
    seq = result.worst[0]
    assert args["context_lens"][seq] % args["key_cache"].shape[3] != 0


def test_planted_bug_wrong_kv_head_for_gqa_is_caught():
    args = problem("gqa_f16")
    actual = nk.numpy_paged_attention(**args, bug="wrong_kv_head")
    result = pagecheck.compare_attention(**args, actual=actual)
    assert not result.passed
    heads, kv_heads = args["query"].shape[1], args["key_cache"].shape[1]
    head = result.worst[1]
    assert head % kv_heads != head // (heads // kv_heads)  # a head the bug maps wrongly


def test_reference_out_is_used_when_given():
    args = problem("gqa_f16")
    out, _ = pagecheck.reference.paged_attention(**args)
    actual = nk.numpy_paged_attention(**args)
    out, lse = pagecheck.reference.paged_attention(**args)
    given = pagecheck.compare_attention(**args, actual=actual, reference_out=out)
    both = pagecheck.compare_attention(**args, actual=actual, reference_out=out, reference_lse=lse)
    computed = pagecheck.compare_attention(**args, actual=actual)
    assert given.description == computed.description == both.description
    shifted = pagecheck.compare_attention(**args, actual=actual, reference_out=out + 0.01)
    assert not shifted.passed


def test_tolerance_model_is_applied():
    args = problem("gqa_f16")
    actual = nk.numpy_paged_attention(**args)
    default = pagecheck.compare_attention(**args, actual=actual)
    loosest = pagecheck.ToleranceModel(precision="loosest")
    wide = pagecheck.compare_attention(**args, actual=actual, model=loosest)
    assert np.all(wide.tolerance >= default.tolerance)
    assert np.any(wide.tolerance > default.tolerance)
    assert "strict" in default.model and "strict" not in wide.model
    assert loosest.precision["rounded"] and not pagecheck.ToleranceModel().precision["rounded"]
    same = pagecheck.ToleranceModel(precision=loosest.precision)  # its dict form reads back
    assert same.describe() == loosest.describe()
    with pytest.raises(ValueError, match="precision: unknown name 'loose'"):
        pagecheck.ToleranceModel(precision="loose")
    assert default.tolerance.shape == actual.shape


def test_strided_query_and_padded_cache_give_the_same_result():
    args = problem("gqa_f16")
    packed = pagecheck.reference.paged_attention(**args)
    q, k, v = args["query"], args["key_cache"], args["value_cache"]
    # The query sliced out of a fused QKV tensor (token stride 3 * heads * head_size).
    fused = np.full((q.shape[0], 3 * q.shape[1], q.shape[2]), np.nan, dtype=q.dtype)
    fused[:, : q.shape[1], :] = q
    # Caches with one padding vector after every slot row and every dim row.
    k_pad = np.full(k.shape[:4] + (2 * k.shape[4],), np.nan, dtype=k.dtype)[..., : k.shape[4]]
    k_pad[...] = k
    v_pad = np.full(v.shape[:3] + (v.shape[3] + 8,), np.nan, dtype=v.dtype)[..., : v.shape[3]]
    v_pad[...] = v
    strided = dict(args, query=fused[:, : q.shape[1], :], key_cache=k_pad, value_cache=v_pad)
    assert not strided["query"].flags.c_contiguous and not k_pad.flags.c_contiguous
    result = pagecheck.reference.paged_attention(**strided)
    assert np.array_equal(result.out, packed.out) and np.array_equal(result.lse, packed.lse)
    fortran = dict(args, query=np.asfortranarray(q), value_cache=np.asfortranarray(v))
    result = pagecheck.reference.paged_attention(**fortran)
    assert np.array_equal(result.out, packed.out)


def test_scale_defaults_to_one_over_sqrt_head_size():
    args = problem("mha_f32")
    given = pagecheck.reference.paged_attention(**args)
    default = pagecheck.reference.paged_attention(**dict(args, scale=None))
    assert np.array_equal(given.out, default.out)
    other = pagecheck.reference.paged_attention(**dict(args, scale=0.5))
    assert not np.array_equal(given.out, other.out)


def test_lse_is_the_log_sum_exp_of_the_logits():
    args = problem("mha_f32")
    _, lse = pagecheck.reference.paged_attention(**args)
    q = nk.decode(args["query"], "float32")
    k = nk.decode(args["key_cache"], "float32")
    s, h, n = 2, 3, int(args["context_lens"][2])
    t = np.arange(n)
    blocks = args["block_table"][s, t // k.shape[3]]
    keys = k[blocks, :, :, t % k.shape[3], :].reshape(n, k.shape[1], q.shape[2])
    logits = args["scale"] * (keys[:, h, :] @ q[s, h])
    assert lse[s, h] == pytest.approx(np.log(np.sum(np.exp(logits))), rel=1e-12)


def test_storage_conversions_round_to_nearest_even():
    rng = np.random.default_rng(3)
    values = rng.normal(size=1000)
    f16 = pagecheck.reference.to_storage(values, "float16")
    assert f16.dtype == np.float16 and np.array_equal(f16, values.astype(np.float16))
    bf16 = pagecheck.reference.to_storage(values, "bfloat16")
    assert bf16.dtype == np.uint16
    back = pagecheck.reference.to_float64(bf16, dtype="bfloat16")
    assert np.array_equal(back, nk.decode(bf16, "bfloat16"))
    assert np.all(np.abs(back - values) <= np.abs(values) * 2.0**-8)
    tie = np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8])  # bfloat16 ties: to even
    assert list(pagecheck.reference.to_storage(tie, "bfloat16")) == [0x3F80, 0x3F82]
