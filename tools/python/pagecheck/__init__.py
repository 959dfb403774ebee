"""pagecheck from Python: the CPU reference, the derived attention tolerance and the golden
fixtures of the pagecheck harness on numpy arrays (docs/python.md).

    import pagecheck
    out, lse = pagecheck.reference.paged_attention(query, key_cache, value_cache,
                                                   block_table, context_lens)
    result = pagecheck.compare_attention(query, key_cache, value_cache, block_table,
                                         context_lens, actual=kernel_out)
    assert result.passed, result.description
    golden = pagecheck.golden.load("fixtures/golden/pa_gqa_f16_h128_b16.h5")

Not built yet (issue 18): pagecheck.cases(), pagecheck.verify(fn) with shrinking, and the
pytest plugin.
"""
from . import golden, reference
from .compare import AttentionComparison, ToleranceModel, compare_attention

__all__ = ["AttentionComparison", "ToleranceModel", "compare_attention", "golden", "reference"]
