"""The pagecheck CPU reference (float64 accumulation) on numpy arrays.

Tensors are numpy arrays, or any object with ``__dlpack__`` on the CPU (torch, jax, ...), read
through ``numpy.from_dlpack``. Storage dtypes: float32, float16, and bfloat16 passed as its
bits, a uint16 or int16 view, with ``dtype="bfloat16"`` (numpy has no bfloat16). Layouts
(docs/reference.md):

- query, key, value: ``[num_tokens, num_heads, head_size]``; token and head strides taken
  from the array (e.g. a query sliced out of a fused QKV tensor), innermost stride 1;
- key_cache: ``[num_blocks, num_kv_heads, head_size / x, block_size, x]`` with
  ``x = 16 // itemsize`` (the serving-engine "x-split" layout);
- value_cache: ``[num_blocks, num_kv_heads, head_size, block_size]``;
  cache strides are taken from the arrays too (padded caches work).

Arrays whose strides the reference cannot express (Fortran order, broadcast, reversed) are read
as a packed copy; the result is the same. Bad arguments raise ``TypeError`` (kind or dtype) or
``ValueError`` (shape or value) naming the argument.
"""
from collections import namedtuple

from ._pagecheck import reference as _ext

#: Result of :func:`paged_attention`: ``out`` float64 [num_seqs, num_heads, head_size] and
#: ``lse`` float64 [num_seqs, num_heads] (natural log of the sum of exp(logits)).
AttentionResult = namedtuple("AttentionResult", ["out", "lse"])


def paged_attention(query, key_cache, value_cache, block_table, context_lens, *, scale=None,
                    alibi_slopes=None, dtype=None, num_threads=0):
    """Decode attention of one query token per sequence over its first ``context_lens[s]``
    cached tokens, kv head ``h // (num_heads // num_kv_heads)`` (GQA/MQA), optional ALiBi
    (``alibi_slopes`` [num_heads], relative to the last token). ``block_table`` is
    [num_seqs, max_blocks_per_seq]; only the entries a sequence uses are read and must lie in
    [0, num_blocks). ``scale`` defaults to 1/sqrt(head_size) (as float32). Returns an
    :data:`AttentionResult` of float64 arrays."""
    out, lse = _ext.paged_attention(query, key_cache, value_cache, block_table, context_lens,
                                    scale=scale, alibi_slopes=alibi_slopes, dtype=dtype,
                                    num_threads=num_threads)
    return AttentionResult(out, lse)


def gather_cached_kv(key, value, key_cache, value_cache, slot_mapping, *, dtype=None):
    """Copies cache slot ``slot_mapping[t]`` (``block * block_size + offset``) of every kv head
    into row t of ``key`` and ``value`` ([num_tokens, num_kv_heads, head_size], their contents
    before the call); a slot of -1 leaves row t as it was. Returns new ``(key, value)`` arrays
    with the strides of the given ones; the arguments are not modified. Exact copies."""
    return _ext.gather_cached_kv(key, value, key_cache, value_cache, slot_mapping, dtype=dtype)


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, *, dtype=None):
    """Writes row t of ``key`` and ``value`` into cache slot ``slot_mapping[t]`` (-1: skipped).
    Returns new ``(key_cache, value_cache)`` arrays with the strides of the given ones; the
    arguments are not modified. Exact copies."""
    return _ext.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, dtype=dtype)


def to_storage(values, dtype):
    """``values`` rounded once to nearest even in storage dtype ``dtype`` ("float32",
    "float16" or "bfloat16"), as the reference rounds; bfloat16 comes back as uint16 bits."""
    return _ext.to_storage(values, dtype)


def to_float64(array, dtype=None):
    """A storage-dtype array as float64 (exact); bfloat16 bits need ``dtype="bfloat16"``."""
    return _ext.to_float64(array, dtype)


__all__ = ["AttentionResult", "paged_attention", "gather_cached_kv", "reshape_and_cache",
           "to_storage", "to_float64"]
