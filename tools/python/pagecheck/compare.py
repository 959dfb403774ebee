"""A kernel's attention output against the reference within the harness's derived tolerance
(verify/tolerance, docs/tolerances.md): the comparison every attention check of pagecheck uses.
"""
from ._pagecheck import AttentionComparison, ToleranceModel
from ._pagecheck import compare_attention as _compare_attention


def compare_attention(query, key_cache, value_cache, block_table, context_lens, actual, *,
                      scale=None, alibi_slopes=None, dtype=None, reference_out=None, model=None,
                      num_threads=0):
    """Compares ``actual`` (the kernel's output [num_seqs, num_heads, head_size] in the inputs'
    storage dtype) with the float64 reference of the same inputs (arguments as for
    :func:`pagecheck.reference.paged_attention`), element by element within the tolerance of
    ``model`` (a :class:`ToleranceModel`; default: float32 accumulation and one final
    rounding). ``reference_out`` (float64, from ``paged_attention`` of the same inputs) saves
    recomputing it. Returns an :class:`AttentionComparison`: ``passed``, ``max_ratio`` (largest
    error / tolerance), ``worst`` (seq, head, dim), ``violations``, ``tolerance`` and
    ``description``, the text the ``pagecheck`` CLI prints."""
    return _compare_attention(query, key_cache, value_cache, block_table, context_lens, actual,
                              scale=scale, alibi_slopes=alibi_slopes, dtype=dtype,
                              reference_out=reference_out, model=model,
                              num_threads=num_threads)


__all__ = ["AttentionComparison", "ToleranceModel", "compare_attention"]
