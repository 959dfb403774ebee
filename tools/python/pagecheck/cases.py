"""The generators' cases of a declared variant as numpy arrays (the C++ case stack of
verify/gen: spec -> materialize -> problem), poison included: every cache slot no sequence
reads holds the cache dtype's poison NaN, block-table entries past a sequence's last block
lie outside the pool, query padding is NaN, and ``out`` starts as the output poison."""
from ._pagecheck import cases as _cases


class Case:
    """One generated case.

    Attributes: ``index`` (its index in the run), ``family``, ``spec`` (the shrinkable
    description as a dict, the JSON that ``pagecheck verify --reproduce-spec`` and
    ``pagecheck.verify(spec=...)`` replay), ``text`` (its printed form), ``summary`` (one
    line) and ``inputs``: the keyword arguments of the family's kernel as writable numpy
    arrays in the case's own strides (see :func:`pagecheck.verify` for the keys).
    """

    def __init__(self, d):
        for key in ("index", "family", "spec", "text", "summary", "inputs"):
            setattr(self, key, d[key])

    def __repr__(self):
        return f"<pagecheck.Case {self.index}: {self.summary}>"


def cases(family, caps, *, seed=1, n=10):
    """The first ``n`` cases of a verification run of seed ``seed`` for a variant of
    ``family`` ("paged_attention", "gather_cached_kv" or "reshape_and_cache") declaring
    ``caps``: a dict (or an object with these attributes) with the keys of the C++
    ``VariantCaps`` -- ``dtypes`` (e.g. ``["float16", "bfloat16"]``), ``head_sizes``,
    ``block_sizes`` (required), ``kv_dtypes``, ``cache_kinds`` (``"x_split"``, ``"nhd"``,
    ``"hnd"``), ``scale_kinds``, ``caps`` (flag names: ``"alibi"``, ``"token_stride"``,
    ``"head_stride"``, ``"strided_output"``, ``"cache_pad"``, ``"cache_pad_shared"``,
    ``"combined_kv"``, ``"sinks"``, ``"window"``, ``"soft_cap"``, ``"non_causal"``,
    ``"dequantize"``, ``"large_cache"``), ``max_query_len``, ``partition_sizes``,
    ``context0``, ``nondeterministic``, ``precision``. The same cases, in the same order, as
    :func:`pagecheck.verify` with the same seed and ``cases=n`` runs. Returns a list of
    :class:`Case`. Bad arguments raise TypeError / ValueError naming the argument."""
    return [Case(d) for d in _cases(family, caps, seed=seed, n=n)]


__all__ = ["Case", "cases"]
