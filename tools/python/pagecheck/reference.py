"""The pagecheck CPU reference (float64 accumulation) on numpy arrays.

Tensors are numpy arrays, or any object with ``__dlpack__`` on the CPU (torch, jax, ...), read
through ``numpy.from_dlpack``. Storage dtypes: float32, float16, and bfloat16 passed as its
bits, a uint16 or int16 view, with ``dtype="bfloat16"`` (numpy has no bfloat16). Layouts
(docs/reference.md):

- query, key, value: ``[num_tokens, num_heads, head_size]``; token and head strides taken
  from the array (e.g. a query sliced out of a fused QKV tensor), innermost stride 1;
- the caches by ``kind``: ``"x_split"`` (the default, the 2023 serving-engine layout): key_cache
  ``[num_blocks, num_kv_heads, head_size / x, block_size, x]`` with ``x = 16 // itemsize``,
  value_cache ``[num_blocks, num_kv_heads, head_size, block_size]``; ``"nhd"``: both
  ``[num_blocks, block_size, num_kv_heads, head_size]``; ``"hnd"``: both
  ``[num_blocks, num_kv_heads, block_size, head_size]``. Cache strides are taken from the
  arrays too (padded caches work).
- ``kv_dtype`` (default: the tokens' dtype) may be ``"fp8_e4m3"`` or ``"fp8_e5m2"``: the caches
  are then uint8 arrays of fp8 codes, scaled by ``k_scale`` / ``v_scale`` (a number, or one
  per kv head; default 1.0).

Arrays whose strides the reference cannot use (Fortran order, broadcast, reversed, transposed
axes) are read as a packed copy; the result is the same. Bad arguments raise ``TypeError``
(kind or dtype) or ``ValueError`` (shape or value) naming the argument.
"""
from collections import namedtuple

from ._pagecheck import reference as _ext

#: Result of :func:`paged_attention`: ``out`` float64 [num_query_tokens, num_heads, head_size]
#: and ``lse`` float64 [num_query_tokens, num_heads] (natural log of the softmax denominator;
#: -inf for a row of a context-0 sequence).
AttentionResult = namedtuple("AttentionResult", ["out", "lse"])


def paged_attention(query, key_cache, value_cache, block_table, context_lens, *, scale=None,
                    alibi_slopes=None, dtype=None, kind=None, kv_dtype=None, k_scale=None,
                    v_scale=None, query_start=None, sinks=None, window=None, soft_cap=None,
                    causal=None, num_threads=0):
    """Attention of each query row over its sequence's first ``context_lens[s]`` cached tokens
    (0: a padding row, output 0), kv head ``h // (num_heads // num_kv_heads)`` (GQA/MQA).
    One query row per sequence (decode), or ``query_start`` [num_seqs + 1] cumulative rows:
    sequence s's rows are its last tokens, causal among themselves unless ``causal=False``.
    Optional ALiBi (``alibi_slopes`` [num_heads], relative to the row's position), ``sinks``
    [num_heads], a sliding ``window`` and a ``soft_cap`` (docs/reference.md gives the order).
    ``block_table`` is [num_seqs, max_blocks_per_seq]; only the entries a sequence uses are
    read and must lie in [0, num_blocks). ``scale`` defaults to 1/sqrt(head_size) (as
    float32). Returns an :data:`AttentionResult` of float64 arrays."""
    out, lse = _ext.paged_attention(query, key_cache, value_cache, block_table, context_lens,
                                    scale=scale, alibi_slopes=alibi_slopes, dtype=dtype,
                                    kind=kind, kv_dtype=kv_dtype, k_scale=k_scale,
                                    v_scale=v_scale, query_start=query_start, sinks=sinks,
                                    window=window, soft_cap=soft_cap, causal=causal,
                                    num_threads=num_threads)
    return AttentionResult(out, lse)


def gather_cached_kv(key, value, key_cache, value_cache, slot_mapping, *, dtype=None, kind=None,
                     kv_dtype=None, k_scale=None, v_scale=None, dequantize=False):
    """Copies cache slot ``slot_mapping[t]`` (``block * block_size + offset``) of every kv head
    into row t of ``key`` and ``value`` ([num_tokens, num_kv_heads, head_size], their contents
    before the call); a slot of -1 leaves row t as it was. Returns new ``(key, value)`` arrays
    with the strides of the given ones; the arguments are not modified. Exact copies, or with
    ``dequantize`` (an fp8 cache, rows of ``dtype``) code * scale rounded once."""
    return _ext.gather_cached_kv(key, value, key_cache, value_cache, slot_mapping, dtype=dtype,
                                 kind=kind, kv_dtype=kv_dtype, k_scale=k_scale,
                                 v_scale=v_scale, dequantize=dequantize)


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, *, dtype=None,
                      kind=None, kv_dtype=None, k_scale=None, v_scale=None):
    """Writes row t of ``key`` and ``value`` into cache slot ``slot_mapping[t]`` (-1: skipped).
    Returns new ``(key_cache, value_cache)`` arrays with the strides of the given ones; the
    arguments are not modified. Exact copies, or into an fp8 cache the code of value / scale
    (docs/dtypes.md)."""
    return _ext.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, dtype=dtype,
                                  kind=kind, kv_dtype=kv_dtype, k_scale=k_scale,
                                  v_scale=v_scale)


def to_storage(values, dtype):
    """``values`` rounded once to nearest even in storage dtype ``dtype`` ("float32",
    "float16", "bfloat16", "fp8_e4m3" or "fp8_e5m2"), as the reference rounds; bfloat16 comes
    back as uint16 bits, fp8 as uint8 codes (saturating at the largest finite value)."""
    return _ext.to_storage(values, dtype)


def to_float64(array, dtype=None):
    """A storage-dtype array as float64 (exact); bfloat16 bits need ``dtype="bfloat16"``, fp8
    codes (uint8) ``dtype="fp8_e4m3"`` or ``"fp8_e5m2"``."""
    return _ext.to_float64(array, dtype)


__all__ = ["AttentionResult", "paged_attention", "gather_cached_kv", "reshape_and_cache",
           "to_storage", "to_float64"]
