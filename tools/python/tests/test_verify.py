"""pagecheck.verify on numpy kernels written in the tests (numpy_kernels.py): the correct
kernels pass, planted bugs are caught and shrunk to small layouts, a failure replays from its
reproduce string, and the kernel's own exceptions become counterexamples."""
import numpy as np
import pytest

import numpy_kernels as nk
import pagecheck

#: A decode kernel's declaration: x-split caches of the token dtype, strided queries, padded
#: caches and ALiBi, which the numpy kernel handles through numpy indexing.
ATTENTION_CAPS = {"dtypes": ["float16", "bfloat16", "float32"], "head_sizes": [16, 32, 64],
                  "block_sizes": [8, 16], "caps": ["alibi", "token_stride", "head_stride",
                                                   "cache_pad"]}
COPY_CAPS = {"dtypes": ["float16", "float32"], "head_sizes": [16, 32], "block_sizes": [8, 16],
             "caps": ["token_stride", "cache_pad"]}


def attention_kernel(bug=None):
    def kernel(query, key_cache, value_cache, block_table, context_lens, scale, dtype,
               alibi_slopes, **_):
        return nk.numpy_paged_attention(query, key_cache, value_cache, block_table,
                                        context_lens, scale, dtype, alibi_slopes, bug=bug)
    kernel.__name__ = f"numpy_attention_{bug or 'ok'}"
    return kernel


def test_numpy_paged_attention_passes():
    result = pagecheck.verify(attention_kernel(), "paged_attention", ATTENTION_CAPS, cases=60,
                              seed=5)
    assert result.run == 60 and result.passed == 60
    assert "numpy_attention_ok" in result.summary


def test_skipped_last_partial_block_is_caught_and_shrunk():
    with pytest.raises(pagecheck.VerificationFailure) as info:
        pagecheck.verify(attention_kernel("skip_partial_block"), "paged_attention",
                         ATTENTION_CAPS, cases=60, seed=5)
    e = info.value
    assert e.outcome == "incorrect"
    # One sequence whose context ends one partial block past a whole one, few heads.
    assert e.spec["num_seqs"] == 1
    ctx, block = e.spec["context_lens"][0], e.spec["block_size"]
    assert block < ctx < 2 * block + 1 and ctx % block != 0
    assert e.shrunk_size <= 2 * block * 4
    assert "shrunk layout" in str(e) and "reproduce in Python" in str(e)
    assert e.spec_text.startswith("paged_attention")


def test_wrong_kv_head_for_gqa_is_caught_and_shrunk():
    with pytest.raises(pagecheck.VerificationFailure) as info:
        pagecheck.verify(attention_kernel("wrong_kv_head"), "paged_attention", ATTENTION_CAPS,
                         cases=60, seed=5)
    e = info.value
    s = e.spec
    assert s["num_seqs"] == 1 and s["context_lens"] == [1]
    assert s["num_kv_heads"] >= 2 and s["num_heads"] // s["num_kv_heads"] >= 2
    assert s["num_heads"] <= 4
    assert e.shrunk_size <= 4


def test_a_failure_replays_from_its_reproduce_string():
    with pytest.raises(pagecheck.VerificationFailure) as info:
        pagecheck.verify(attention_kernel("wrong_kv_head"), "paged_attention", ATTENTION_CAPS,
                         cases=20, seed=2)
    reproduce = info.value.reproduce
    with pytest.raises(pagecheck.VerificationFailure) as again:
        pagecheck.verify(attention_kernel("wrong_kv_head"), "paged_attention", ATTENTION_CAPS,
                         spec=reproduce)
    assert again.value.spec == info.value.spec
    # The correct kernel passes the same case, given as the spec dict.
    ok = pagecheck.verify(attention_kernel(), "paged_attention", ATTENTION_CAPS,
                          spec=info.value.spec)
    assert ok.passed == 1


def test_in_place_kernel_writing_out_passes():
    def kernel(out, **inputs):
        out[...] = attention_kernel()(**inputs)
    assert pagecheck.verify(kernel, "paged_attention", ATTENTION_CAPS, cases=10).passed == 10


def test_unwritten_output_is_caught():
    def kernel(out, **inputs):  # writes nothing: the output poison stays
        return None
    with pytest.raises(pagecheck.VerificationFailure, match="incorrect"):
        pagecheck.verify(kernel, "paged_attention", ATTENTION_CAPS, cases=5)


def test_the_kernels_exception_is_a_shrunk_counterexample():
    def kernel(context_lens, block_size=None, **inputs):
        if max(context_lens) > 20:
            raise IndexError("too long")
        return attention_kernel()(context_lens=context_lens, **inputs)
    with pytest.raises(pagecheck.VerificationFailure) as info:
        pagecheck.verify(kernel, "paged_attention", ATTENTION_CAPS, cases=40, seed=5)
    assert info.value.outcome == "launch_failed"
    assert "IndexError" in info.value.message
    assert isinstance(info.value.__cause__, IndexError)
    assert info.value.spec["context_lens"] == [21]


def test_copies_pass_and_a_planted_copy_bug_is_shrunk():
    def gather(key, value, key_cache, value_cache, slot_mapping, **_):
        return nk.numpy_gather(key, value, key_cache, value_cache, slot_mapping)

    def reshape(key, value, key_cache, value_cache, slot_mapping, **_):
        return nk.numpy_reshape(key, value, key_cache, value_cache, slot_mapping)

    def reshape_skips_last(key, value, key_cache, value_cache, slot_mapping, **_):
        return nk.numpy_reshape(key[:-1], value[:-1], key_cache, value_cache, slot_mapping[:-1])

    assert pagecheck.verify(gather, "gather_cached_kv", COPY_CAPS, cases=30).passed == 30
    assert pagecheck.verify(reshape, "reshape_and_cache", COPY_CAPS, cases=30).passed == 30
    with pytest.raises(pagecheck.VerificationFailure) as info:
        pagecheck.verify(reshape_skips_last, "reshape_and_cache", COPY_CAPS, cases=30)
    assert len(info.value.spec["slot_mapping"]) == 1
    assert info.value.shrunk_size <= 2


def test_cases_are_the_verified_cases_with_their_poison():
    caps = dict(ATTENTION_CAPS, dtypes=["float32"])
    seen = []

    def kernel(query, **inputs):
        seen.append(np.array(query))
        return attention_kernel()(query=query, **inputs)
    pagecheck.verify(kernel, "paged_attention", caps, cases=6, seed=9, determinism_share=0)
    generated = pagecheck.cases("paged_attention", caps, seed=9, n=6)
    assert [c.index for c in generated] == list(range(6))
    for case, query in zip(generated, seen):
        assert np.array_equal(case.inputs["query"], query)
    again = pagecheck.cases("paged_attention", caps, seed=9, n=6)
    assert [c.spec for c in again] == [c.spec for c in generated]
    for case in generated:
        i = case.inputs
        assert np.isnan(i["out"]).all()  # output poison
        assert case.text.startswith("paged_attention") and case.summary in repr(case)
        used = set()
        for s, n in enumerate(i["context_lens"]):
            used.update(int(b) for b in i["block_table"][s, :-(-int(n) // case.spec["block_size"])])
        unused = [b for b in range(i["key_cache"].shape[0]) if b not in used]
        if unused:  # every block no sequence reads is poison
            assert np.isnan(i["key_cache"][unused]).all()
            assert np.isnan(i["value_cache"][unused]).all()
