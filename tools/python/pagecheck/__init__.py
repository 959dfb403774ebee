"""pagecheck from Python: the CPU reference, the derived attention tolerance and the golden
fixtures of the pagecheck harness on numpy arrays (docs/python.md).

    import pagecheck
    out, lse = pagecheck.reference.paged_attention(query, key_cache, value_cache,
                                                   block_table, context_lens)
    result = pagecheck.compare_attention(query, key_cache, value_cache, block_table,
                                         context_lens, actual=kernel_out)
    assert result.passed, result.description
    golden = pagecheck.golden.load("fixtures/golden/pa_gqa_f16_h128_b16.h5")

    for case in pagecheck.cases("paged_attention", caps, seed=1, n=10): ...
    pagecheck.verify(my_kernel, "paged_attention", caps, cases=100)  # shrinks a failure

The pytest plugin (pagecheck.pytest_plugin) adds --pagecheck-cases / --pagecheck-seed and
the ``pagecheck`` fixture.
"""
from . import golden, reference
from .cases import Case, cases
from .compare import AttentionComparison, ToleranceModel, compare_attention
from .verification import VerificationFailure, VerifyResult, verify

__all__ = ["AttentionComparison", "Case", "ToleranceModel", "VerificationFailure",
           "VerifyResult", "cases", "compare_attention", "golden", "reference", "verify"]
