"""Test helpers written with numpy alone (no pagecheck code): storage conversions, random
paged-attention and cache-copy problems in the serving-engine layouts, and numpy
implementations of the kernels, which the tests treat as the kernels under test (with planted
bugs on request)."""
import numpy as np

#: Block-table entries past a sequence's last block (out of range on purpose).
TABLE_POISON = 2**31 - 1
#: bfloat16 quiet NaN bits.
BF16_NAN = 0x7FC0


def storage_dtype(dtype):
    """The numpy dtype that stores a pagecheck dtype (bfloat16: uint16 bits)."""
    return {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16}[dtype]


def x_of(dtype):
    """Elements per 16-byte vector of the key cache."""
    return 16 // np.dtype(storage_dtype(dtype)).itemsize


def encode(values, dtype):
    """float64 values into storage. bfloat16 truncates float32 bits: exact for values drawn by
    random_values, and NaN stays NaN."""
    values = np.asarray(values, dtype=np.float64)
    if dtype != "bfloat16":
        return values.astype(storage_dtype(dtype))
    bits = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    bits[np.isnan(values)] = BF16_NAN
    return bits


def decode(array, dtype):
    """Storage into float64 (exact)."""
    array = np.asarray(array)
    if dtype == "bfloat16":
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return array.astype(np.float64)


def random_values(rng, shape, dtype):
    """Mixed-sign values of magnitude in [1/16, 1], exactly representable in `dtype`."""
    v = rng.uniform(1 / 16, 1, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return decode(encode(v, dtype), dtype)


def attention_problem(rng, dtype, context_lens, num_heads, num_kv_heads, head_size, block_size,
                      alibi=False, spare_blocks=2, extra_columns=1):
    """Keyword arguments of pagecheck.reference.paged_attention for a random problem: blocks
    shuffled through the pool, every slot outside a context, every spare block NaN, unused
    block-table entries TABLE_POISON."""
    context_lens = np.asarray(context_lens, dtype=np.int32)
    num_seqs = len(context_lens)
    x = x_of(dtype)
    used = [-(-int(n) // block_size) for n in context_lens]
    num_blocks = sum(used) + spare_blocks
    max_blocks = max(used) + extra_columns
    perm = rng.permutation(num_blocks)
    table = np.full((num_seqs, max_blocks), TABLE_POISON, dtype=np.int32)
    key = np.full((num_blocks, num_kv_heads, head_size // x, block_size, x), np.nan)
    value = np.full((num_blocks, num_kv_heads, head_size, block_size), np.nan)
    next_block = 0
    for s, n in enumerate(context_lens):
        for b in range(used[s]):
            block = perm[next_block]
            next_block += 1
            table[s, b] = block
            slots = min(block_size, int(n) - b * block_size)
            k = random_values(rng, (slots, num_kv_heads, head_size), dtype)
            v = random_values(rng, (slots, num_kv_heads, head_size), dtype)
            key[block, :, :, :slots, :] = k.reshape(slots, num_kv_heads, head_size // x,
                                                    x).transpose(1, 2, 0, 3)
            value[block, :, :, :slots] = v.transpose(1, 2, 0)
    query = 4 * random_values(rng, (num_seqs, num_heads, head_size), dtype)
    args = {"query": encode(query, dtype), "key_cache": encode(key, dtype),
            "value_cache": encode(value, dtype), "block_table": table,
            "context_lens": context_lens, "scale": float(np.float32(1 / np.sqrt(head_size))),
            "dtype": dtype, "alibi_slopes": None}
    if alibi:
        args["alibi_slopes"] = rng.uniform(0.01, 0.5, size=num_heads).astype(np.float32)
    return args


def numpy_paged_attention(query, key_cache, value_cache, block_table, context_lens, scale,
                          dtype, alibi_slopes=None, bug=None, rounded=True):
    """Paged-attention decode in numpy float64, rounded to the storage dtype (rounded=False:
    the float64 result). bug="skip_partial_block" drops the last, partial block of each
    sequence; bug="wrong_kv_head" maps query head h to kv head h % num_kv_heads (GQA)."""
    q = decode(query, dtype)
    k = decode(key_cache, dtype)
    v = decode(value_cache, dtype)
    num_seqs, num_heads, head_size = q.shape
    num_kv_heads, block_size = k.shape[1], k.shape[3]
    out = np.zeros(q.shape)
    for s in range(num_seqs):
        n = int(context_lens[s])
        if bug == "skip_partial_block" and n > block_size:
            n = n // block_size * block_size
        t = np.arange(n)
        blocks = block_table[s, t // block_size]
        keys = k[blocks, :, :, t % block_size, :].reshape(n, num_kv_heads, head_size)
        values = v[blocks, :, :, t % block_size]
        for h in range(num_heads):
            kv = h % num_kv_heads if bug == "wrong_kv_head" else h // (num_heads // num_kv_heads)
            logits = scale * (keys[:, kv, :] @ q[s, h])
            if alibi_slopes is not None:
                logits = logits + float(alibi_slopes[h]) * (t - int(context_lens[s]) + 1)
            w = np.exp(logits - logits.max())
            out[s, h] = (w @ values[:, kv, :]) / w.sum()
    if not rounded:
        return out
    if dtype == "bfloat16":
        # numpy has no bfloat16: round to nearest even on the float32 bits.
        bits = out.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return bits.astype(np.uint16)
    return out.astype(storage_dtype(dtype))


def copy_problem(rng, dtype, num_tokens, num_kv_heads, head_size, block_size, num_blocks,
                 num_skipped):
    """Keyword arguments of gather_cached_kv / reshape_and_cache: distinct random slots (some
    -1), random caches and rows."""
    x = x_of(dtype)
    slots = rng.choice(num_blocks * block_size, size=num_tokens, replace=False).astype(np.int64)
    slots[rng.choice(num_tokens, size=num_skipped, replace=False)] = -1
    shape_k = (num_blocks, num_kv_heads, head_size // x, block_size, x)
    shape_v = (num_blocks, num_kv_heads, head_size, block_size)
    rows = (num_tokens, num_kv_heads, head_size)
    return {"key": encode(random_values(rng, rows, dtype), dtype),
            "value": encode(random_values(rng, rows, dtype), dtype),
            "key_cache": encode(random_values(rng, shape_k, dtype), dtype),
            "value_cache": encode(random_values(rng, shape_v, dtype), dtype),
            "slot_mapping": slots, "dtype": dtype}


def numpy_gather(key, value, key_cache, value_cache, slot_mapping):
    """gather_cached_kv in numpy: row t = cache slot slot_mapping[t]; -1 rows untouched."""
    key, value = key.copy(), value.copy()
    num_tokens, num_kv_heads, head_size = key.shape
    block_size = key_cache.shape[3]
    for t, slot in enumerate(slot_mapping):
        if slot < 0:
            continue
        b, o = divmod(int(slot), block_size)
        key[t] = key_cache[b, :, :, o, :].reshape(num_kv_heads, head_size)
        value[t] = value_cache[b, :, :, o]
    return key, value


def numpy_reshape(key, value, key_cache, value_cache, slot_mapping):
    """reshape_and_cache in numpy: cache slot slot_mapping[t] = row t; -1 skipped."""
    key_cache, value_cache = key_cache.copy(), value_cache.copy()
    _, num_kv_heads, groups, block_size, x = key_cache.shape
    for t, slot in enumerate(slot_mapping):
        if slot < 0:
            continue
        b, o = divmod(int(slot), block_size)
        key_cache[b, :, :, o, :] = key[t].reshape(num_kv_heads, groups, x)
        value_cache[b, :, :, o] = value[t]
    return key_cache, value_cache
