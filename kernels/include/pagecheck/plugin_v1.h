/* pagecheck kernel plugin ABI version 1, frozen: the structs a plugin built for ABI 1 passes
 * and receives. The host (pagecheck's registry) still loads such plugins and calls them through
 * these definitions; new plugins use pagecheck/plugin.h (version 2). Names carry a _v1 suffix
 * here; their layout is byte for byte what ABI 1 defined (the dtype, family and status enums
 * are shared with version 2, whose first three dtypes keep their values).
 */
#ifndef PAGECHECK_PLUGIN_V1_H
#define PAGECHECK_PLUGIN_V1_H

#include "pagecheck/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Version number a plugin built for this header exports. */
#define PAGECHECK_PLUGIN_ABI_VERSION_1 1

/** Put once in a version-1 plugin's source (instead of PAGECHECK_PLUGIN_DECLARE_ABI()). */
#ifdef __cplusplus
#define PAGECHECK_PLUGIN_DECLARE_ABI_V1() \
  extern "C" PAGECHECK_PLUGIN_VISIBLE const int pagecheck_plugin_abi_version = \
      PAGECHECK_PLUGIN_ABI_VERSION_1;
#else
#define PAGECHECK_PLUGIN_DECLARE_ABI_V1() \
  PAGECHECK_PLUGIN_VISIBLE const int pagecheck_plugin_abi_version = PAGECHECK_PLUGIN_ABI_VERSION_1;
#endif

/** Paged cache layout (see README): key [blocks, kv_heads, head_size/x, block_size, x],
 *  value [blocks, kv_heads, head_size, block_size]; innermost strides are 1. */
typedef struct pc_cache_layout_v1 {
  int64_t num_blocks;         /**< physical blocks in the pool */
  int64_t num_kv_heads;       /**< key/value heads */
  int64_t head_size;          /**< elements per head */
  int64_t block_size;         /**< token slots per block */
  int64_t x;                  /**< elements per 16 bytes (16 / element size) */
  int64_t key_stride_block;   /**< key: elements between blocks */
  int64_t key_stride_head;    /**< key: elements between kv heads */
  int64_t key_stride_group;   /**< key: elements between x-groups */
  int64_t key_stride_slot;    /**< key: elements between slots */
  int64_t value_stride_block; /**< value: elements between blocks */
  int64_t value_stride_head;  /**< value: elements between kv heads */
  int64_t value_stride_dim;   /**< value: elements between dims */
} pc_cache_layout_v1;

/** Arguments of one paged-attention decode call. */
typedef struct pc_paged_attention_args_v1 {
  pc_dtype dtype;              /**< storage dtype of query, caches, output */
  int64_t num_seqs;            /**< batch size (one query token each) */
  int64_t num_heads;           /**< query heads; a multiple of cache.num_kv_heads */
  int64_t max_blocks_per_seq;  /**< block-table columns */
  int64_t max_context_len;     /**< max of context_lens (host-side value) */
  float scale;                 /**< logit scale */
  const void* query;           /**< [num_seqs, num_heads, head_size] */
  int64_t query_stride_seq;    /**< elements between sequences */
  int64_t query_stride_head;   /**< elements between heads */
  const void* key_cache;       /**< key cache, layout `cache` */
  const void* value_cache;     /**< value cache, layout `cache` */
  pc_cache_layout_v1 cache;       /**< cache layout */
  const int32_t* block_table;  /**< [num_seqs, block_table_stride] physical block indices */
  int64_t block_table_stride;  /**< elements between block-table rows (>= max_blocks_per_seq) */
  const int32_t* context_lens; /**< [num_seqs] tokens per sequence, >= 1 */
  const float* alibi_slopes;   /**< [num_heads] or NULL: logit += slope * (t - context_len + 1) */
  void* out;                   /**< [num_seqs, num_heads, head_size] output */
  int64_t out_stride_seq;      /**< elements between sequences */
  int64_t out_stride_head;     /**< elements between heads */
} pc_paged_attention_args_v1;

/** Arguments of one gather_cached_kv call (cache -> contiguous). Rows whose slot is -1 must be
 *  left untouched. */
typedef struct pc_gather_args_v1 {
  pc_dtype dtype;              /**< storage dtype */
  int64_t num_tokens;          /**< rows of key_out / value_out */
  const void* key_cache;       /**< key cache, layout `cache` */
  const void* value_cache;     /**< value cache, layout `cache` */
  pc_cache_layout_v1 cache;       /**< cache layout */
  const int64_t* slot_mapping; /**< [num_tokens] block * block_size + offset, or -1 */
  void* key_out;               /**< [num_tokens, num_kv_heads, head_size] */
  int64_t key_stride_token;    /**< elements between key_out rows */
  int64_t key_stride_head;     /**< elements between key_out heads */
  void* value_out;             /**< [num_tokens, num_kv_heads, head_size] */
  int64_t value_stride_token;  /**< elements between value_out rows */
  int64_t value_stride_head;   /**< elements between value_out heads */
} pc_gather_args_v1;

/** Arguments of one reshape_and_cache call (contiguous -> cache). Slot -1 skips the token. */
typedef struct pc_reshape_and_cache_args_v1 {
  pc_dtype dtype;              /**< storage dtype */
  int64_t num_tokens;          /**< rows of key / value */
  const void* key;             /**< [num_tokens, num_kv_heads, head_size] */
  int64_t key_stride_token;    /**< elements between key rows */
  int64_t key_stride_head;     /**< elements between key heads */
  const void* value;           /**< [num_tokens, num_kv_heads, head_size] */
  int64_t value_stride_token;  /**< elements between value rows */
  int64_t value_stride_head;   /**< elements between value heads */
  void* key_cache;             /**< key cache, layout `cache` */
  void* value_cache;           /**< value cache, layout `cache` */
  pc_cache_layout_v1 cache;       /**< cache layout */
  const int64_t* slot_mapping; /**< [num_tokens] block * block_size + offset, or -1 */
} pc_reshape_and_cache_args_v1;

/** Capability flags of a variant. */
enum {
  PC_V1_CAP_ALIBI = 1u << 0,          /**< accepts alibi_slopes != NULL */
  PC_V1_CAP_STRIDED_TOKENS = 1u << 1, /**< accepts non-packed token strides */
  PC_V1_CAP_PADDED_CACHE = 1u << 2,   /**< accepts non-packed cache strides */
  PC_V1_CAP_LARGE_CACHE = 1u << 3,    /**< correct for caches beyond 2^31 elements */
};

/** A kernel variant. Every pointer in it must stay valid while the plugin is loaded. `args`
 *  points to the family's args struct (pc_paged_attention_args_v1, pc_gather_args_v1 or
 *  pc_reshape_and_cache_args_v1). */
typedef struct pc_variant_v1 {
  const char* name;            /**< unique within the family, e.g. "v1_shared_q" */
  const char* description;     /**< one line */
  pc_family family;            /**< which args struct `args` points to */
  uint32_t dtype_mask;         /**< bit (1u << pc_dtype) per supported dtype */
  const int32_t* head_sizes;   /**< supported head sizes */
  int32_t num_head_sizes;      /**< entries in head_sizes (> 0) */
  const int32_t* block_sizes;  /**< supported block sizes */
  int32_t num_block_sizes;     /**< entries in block_sizes (> 0) */
  uint32_t caps;               /**< PC_V1_CAP_* flags */
  /** Host-side check; returns PC_STATUS_OK or writes a reason into msg (NUL-terminated). */
  pc_status (*can_implement)(const struct pc_variant_v1* self, const void* args, char* msg,
                             size_t msg_len);
  /** Device workspace bytes `launch` needs for args (may be NULL: none). */
  size_t (*workspace_bytes)(const struct pc_variant_v1* self, const void* args);
  /** Enqueues the kernel(s) on `stream` (a cudaStream_t); the workspace holds
   *  workspace_bytes(args) bytes, 256-byte aligned. Must not synchronize. */
  pc_status (*launch)(const struct pc_variant_v1* self, const void* args, void* workspace,
                      void* stream, char* msg, size_t msg_len);
  void* user_data;             /**< opaque, for the plugin (the host passes `self` back) */
} pc_variant_v1;

/** What the host hands a plugin's registration function. */
typedef struct pc_host_v1 {
  int abi_version; /**< PAGECHECK_PLUGIN_ABI_VERSION of the host */
  void* context;   /**< host's opaque context */
  /** Registers a copy of *variant; returns PC_STATUS_OK or PC_STATUS_INVALID_ARGUMENT. */
  pc_status (*add_variant)(void* context, const pc_variant_v1* variant);
} pc_host_v1;

/** Signature of the registration function of a version-1 plugin. */
typedef int (*pc_register_fn_v1)(const pc_host_v1* host);

#ifdef __cplusplus
}
#endif

#endif /* PAGECHECK_PLUGIN_V1_H */
