"""pagecheck.verify and pagecheck.cases: tensors through __dlpack__ (numpy's own), and bad
arguments raising TypeError / ValueError that name the argument."""
import numpy as np
import pytest

import numpy_kernels as nk
import pagecheck
from test_dlpack import DLPackOnly

CAPS = {"dtypes": ["float16"], "head_sizes": [16], "block_sizes": [8]}


def kernel(query, key_cache, value_cache, block_table, context_lens, scale, dtype, **_):
    return nk.numpy_paged_attention(query, key_cache, value_cache, block_table, context_lens,
                                    scale, dtype)


def test_dlpack_inputs_and_outputs():
    seen = []

    def dlpack_kernel(query, key_cache, value_cache, block_table, context_lens, **rest):
        seen.append(type(query))
        # The kernel sees DLPack-only tensors, as a torch kernel sees torch tensors.
        arrays = [np.from_dlpack(t) for t in (query, key_cache, value_cache, block_table,
                                              context_lens)]
        return DLPackOnly(kernel(*arrays, **rest))

    result = pagecheck.verify(dlpack_kernel, "paged_attention", CAPS, cases=8, to=DLPackOnly)
    assert result.passed == 8 and set(seen) == {DLPackOnly}


def test_back_converts_outputs():
    class Boxed:
        def __init__(self, array):
            self.array = array
    result = pagecheck.verify(lambda **k: Boxed(kernel(**k)), "paged_attention", CAPS, cases=3,
                              back=lambda b: b.array)
    assert result.passed == 3


@pytest.mark.parametrize("call, error, match", [
    (lambda: pagecheck.verify(42, "paged_attention", CAPS), TypeError, "fn: expected a callable"),
    (lambda: pagecheck.verify(kernel, "attention", CAPS), ValueError, "family"),
    (lambda: pagecheck.verify(kernel, 3, CAPS), TypeError, "family"),
    (lambda: pagecheck.verify(kernel, "paged_attention", [1]), TypeError, "caps"),
    (lambda: pagecheck.verify(kernel, "paged_attention", {"dtypes": ["float16"]}), ValueError,
     "caps: missing 'head_sizes'"),
    (lambda: pagecheck.verify(kernel, "paged_attention", dict(CAPS, caps=["alibi", "nope"])),
     ValueError, r"caps\['caps'\]: unknown flag 'nope'"),
    (lambda: pagecheck.verify(kernel, "paged_attention", dict(CAPS, head_sizes=[12])),
     ValueError, "caps: .*head size 12"),
    (lambda: pagecheck.verify(kernel, "paged_attention", dict(CAPS, head_sizes="16")),
     TypeError, r"caps\['head_sizes'\]"),
    (lambda: pagecheck.verify(kernel, "paged_attention", dict(CAPS, colour="red")),
     ValueError, "caps: unknown key 'colour'"),
    (lambda: pagecheck.verify(kernel, "paged_attention", dict(CAPS, dtypes=["float42"])),
     ValueError, "caps: .*float42"),
    (lambda: pagecheck.verify(kernel, "paged_attention", CAPS, cases=0), ValueError, "cases"),
    (lambda: pagecheck.verify(kernel, "paged_attention", CAPS, cases=2.5), TypeError, "cases"),
    (lambda: pagecheck.verify(kernel, "paged_attention", CAPS, seed=-1), ValueError, "seed"),
    (lambda: pagecheck.verify(kernel, "paged_attention", CAPS, to=3), TypeError, "to"),
    (lambda: pagecheck.verify(kernel, "paged_attention", CAPS, back="x"), TypeError, "back"),
    (lambda: pagecheck.verify(kernel, "paged_attention", CAPS, shrink_seconds=-1), ValueError,
     "shrink_seconds"),
    (lambda: pagecheck.verify(kernel, "paged_attention", CAPS, determinism_share=2), ValueError,
     "determinism_share"),
    (lambda: pagecheck.verify(kernel, "paged_attention", CAPS, spec=7), TypeError, "spec"),
    (lambda: pagecheck.verify(kernel, "paged_attention", CAPS, spec="{oops"), ValueError,
     "spec"),
    (lambda: pagecheck.verify(kernel, "paged_attention", CAPS, name=1), TypeError, "name"),
    (lambda: pagecheck.cases("paged_attention", CAPS, n="3"), TypeError, "n: expected an int"),
    (lambda: pagecheck.cases("paged_attention", CAPS, n=-1), ValueError, "n: must be"),
    (lambda: pagecheck.cases("gather", CAPS), ValueError, "family"),
])
def test_bad_arguments_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_a_spec_of_another_family_is_refused():
    spec = pagecheck.cases("gather_cached_kv", CAPS, n=1)[0].spec
    with pytest.raises(ValueError, match="spec: a gather_cached_kv case, but family is "
                                         "paged_attention"):
        pagecheck.verify(kernel, "paged_attention", CAPS, spec=spec)


def test_outputs_of_the_wrong_shape_are_a_counterexample_naming_them():
    with pytest.raises(pagecheck.VerificationFailure, match="the Python kernel's output: "
                                                            "expected shape"):
        pagecheck.verify(lambda **k: kernel(**k)[:, :1], "paged_attention", CAPS, cases=3)


def test_caps_may_be_an_object():
    class Caps:
        dtypes = ["float16"]
        head_sizes = [16]
        block_sizes = [8]
    caps = Caps()
    caps.__dict__.update(dtypes=["float16"], head_sizes=[16], block_sizes=[8])
    assert len(pagecheck.cases("paged_attention", caps, n=2)) == 2
