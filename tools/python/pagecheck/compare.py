"""A kernel's attention output against the reference within the harness's derived tolerance
(verify/tolerance, docs/tolerances.md): the comparison every attention check of pagecheck uses.
"""
from ._pagecheck import AttentionComparison, ToleranceModel
from ._pagecheck import compare_attention as _compare_attention


def compare_attention(query, key_cache, value_cache, block_table, context_lens, actual, *,
                      scale=None, alibi_slopes=None, dtype=None, reference_out=None,
                      reference_lse=None, model=None, kind=None, kv_dtype=None, k_scale=None,
                      v_scale=None, query_start=None, sinks=None, window=None, soft_cap=None,
                      causal=None, num_threads=0):
    """Compares ``actual`` (the kernel's output [num_query_tokens, num_heads, head_size] in the
    inputs' storage dtype) with the float64 reference of the same inputs (arguments as for
    :func:`pagecheck.reference.paged_attention`), element by element within the tolerance of
    ``model`` (a :class:`ToleranceModel`; default: the strict float32 model, one final
    rounding; ``ToleranceModel(precision=...)`` for a kernel that declares how it rounds).
    ``reference_out`` and ``reference_lse`` (float64, the two results of ``paged_attention`` of
    the same inputs) save recomputing them; the tolerance takes its magnitudes from the lse, so
    with ``reference_out`` alone the reference still runs (for the lse). Returns an
    :class:`AttentionComparison`: ``passed``, ``max_ratio`` (largest error / tolerance),
    ``worst`` (row, head, dim), ``violations``, ``tolerance`` and ``description``, the text
    the ``pagecheck`` CLI prints."""
    return _compare_attention(query, key_cache, value_cache, block_table, context_lens, actual,
                              scale=scale, alibi_slopes=alibi_slopes, dtype=dtype,
                              reference_out=reference_out, reference_lse=reference_lse,
                              model=model, kind=kind, kv_dtype=kv_dtype, k_scale=k_scale,
                              v_scale=v_scale, query_start=query_start, sinks=sinks,
                              window=window, soft_cap=soft_cap, causal=causal,
                              num_threads=num_threads)


__all__ = ["AttentionComparison", "ToleranceModel", "compare_attention"]
