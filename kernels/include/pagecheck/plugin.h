/* pagecheck kernel plugin ABI: the one interface through which every kernel variant, built-in
 * or external, is registered, described, checked and launched.
 *
 * A plugin is a shared library exporting
 *     const int pagecheck_plugin_abi_version;          (PAGECHECK_PLUGIN_DECLARE_ABI())
 *     int pagecheck_plugin_register(const pc_host* host);
 * The host refuses a plugin whose ABI version differs from its own; the registration function
 * calls host->add_variant once per variant and returns 0 (non-zero = failure).
 * All pointers given to a variant are device pointers unless stated otherwise; all strides are
 * in elements and 64-bit. Plain C, no CUDA headers: streams travel as `void*` (cudaStream_t).
 */
#ifndef PAGECHECK_PLUGIN_H
#define PAGECHECK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bump on any change of a struct below; the host refuses plugins built for another one. */
#define PAGECHECK_PLUGIN_ABI_VERSION 1

/** Name of the registration function a plugin exports. */
#define PAGECHECK_PLUGIN_REGISTER_SYMBOL "pagecheck_plugin_register"
/** Name of the `const int` a plugin exports holding the ABI version it was built for. */
#define PAGECHECK_PLUGIN_ABI_SYMBOL "pagecheck_plugin_abi_version"

#if defined(__GNUC__)
#define PAGECHECK_PLUGIN_VISIBLE __attribute__((visibility("default")))
#else
#define PAGECHECK_PLUGIN_VISIBLE
#endif

/** Put once in a plugin's source: exports the ABI version the plugin was compiled against. */
#ifdef __cplusplus
#define PAGECHECK_PLUGIN_DECLARE_ABI() \
  extern "C" PAGECHECK_PLUGIN_VISIBLE const int pagecheck_plugin_abi_version = \
      PAGECHECK_PLUGIN_ABI_VERSION;
#else
#define PAGECHECK_PLUGIN_DECLARE_ABI() \
  PAGECHECK_PLUGIN_VISIBLE const int pagecheck_plugin_abi_version = PAGECHECK_PLUGIN_ABI_VERSION;
#endif

typedef enum pc_dtype {
  PC_DTYPE_FLOAT32 = 0,  /**< IEEE binary32 */
  PC_DTYPE_FLOAT16 = 1,  /**< IEEE binary16 */
  PC_DTYPE_BFLOAT16 = 2, /**< bfloat16 */
} pc_dtype;

typedef enum pc_family {
  PC_FAMILY_PAGED_ATTENTION = 0,   /**< decode attention over the paged cache */
  PC_FAMILY_GATHER_CACHED_KV = 1,  /**< paged cache -> contiguous K/V */
  PC_FAMILY_RESHAPE_AND_CACHE = 2, /**< contiguous K/V -> paged cache */
} pc_family;

typedef enum pc_status {
  PC_STATUS_OK = 0,               /**< done */
  PC_STATUS_UNSUPPORTED = 1,      /**< valid problem this variant does not handle */
  PC_STATUS_INVALID_ARGUMENT = 2, /**< inconsistent arguments */
  PC_STATUS_CUDA_ERROR = 3,       /**< a CUDA call or launch failed */
  PC_STATUS_INTERNAL_ERROR = 4,   /**< anything else */
} pc_status;

/** Paged cache layout (see README): key [blocks, kv_heads, head_size/x, block_size, x],
 *  value [blocks, kv_heads, head_size, block_size]; innermost strides are 1. */
typedef struct pc_cache_layout {
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
} pc_cache_layout;

/** Arguments of one paged-attention decode call. */
typedef struct pc_paged_attention_args {
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
  pc_cache_layout cache;       /**< cache layout */
  const int32_t* block_table;  /**< [num_seqs, block_table_stride] physical block indices */
  int64_t block_table_stride;  /**< elements between block-table rows (>= max_blocks_per_seq) */
  const int32_t* context_lens; /**< [num_seqs] tokens per sequence, >= 1 */
  const float* alibi_slopes;   /**< [num_heads] or NULL: logit += slope * (t - context_len + 1) */
  void* out;                   /**< [num_seqs, num_heads, head_size] output */
  int64_t out_stride_seq;      /**< elements between sequences */
  int64_t out_stride_head;     /**< elements between heads */
} pc_paged_attention_args;

/** Arguments of one gather_cached_kv call (cache -> contiguous). Rows whose slot is -1 must be
 *  left untouched. */
typedef struct pc_gather_args {
  pc_dtype dtype;              /**< storage dtype */
  int64_t num_tokens;          /**< rows of key_out / value_out */
  const void* key_cache;       /**< key cache, layout `cache` */
  const void* value_cache;     /**< value cache, layout `cache` */
  pc_cache_layout cache;       /**< cache layout */
  const int64_t* slot_mapping; /**< [num_tokens] block * block_size + offset, or -1 */
  void* key_out;               /**< [num_tokens, num_kv_heads, head_size] */
  int64_t key_stride_token;    /**< elements between key_out rows */
  int64_t key_stride_head;     /**< elements between key_out heads */
  void* value_out;             /**< [num_tokens, num_kv_heads, head_size] */
  int64_t value_stride_token;  /**< elements between value_out rows */
  int64_t value_stride_head;   /**< elements between value_out heads */
} pc_gather_args;

/** Arguments of one reshape_and_cache call (contiguous -> cache). Slot -1 skips the token. */
typedef struct pc_reshape_and_cache_args {
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
  pc_cache_layout cache;       /**< cache layout */
  const int64_t* slot_mapping; /**< [num_tokens] block * block_size + offset, or -1 */
} pc_reshape_and_cache_args;

/** Capability flags of a variant. */
enum {
  PC_CAP_ALIBI = 1u << 0,          /**< accepts alibi_slopes != NULL */
  PC_CAP_STRIDED_TOKENS = 1u << 1, /**< accepts non-packed token strides */
  PC_CAP_PADDED_CACHE = 1u << 2,   /**< accepts non-packed cache strides */
  PC_CAP_LARGE_CACHE = 1u << 3,    /**< correct for caches beyond 2^31 elements */
};

/** A kernel variant. Every pointer in it must stay valid while the plugin is loaded. `args`
 *  points to the family's args struct (pc_paged_attention_args, pc_gather_args or
 *  pc_reshape_and_cache_args). */
typedef struct pc_variant {
  const char* name;            /**< unique within the family, e.g. "v1_shared_q" */
  const char* description;     /**< one line */
  pc_family family;            /**< which args struct `args` points to */
  uint32_t dtype_mask;         /**< bit (1u << pc_dtype) per supported dtype */
  const int32_t* head_sizes;   /**< supported head sizes */
  int32_t num_head_sizes;      /**< entries in head_sizes (> 0) */
  const int32_t* block_sizes;  /**< supported block sizes */
  int32_t num_block_sizes;     /**< entries in block_sizes (> 0) */
  uint32_t caps;               /**< PC_CAP_* flags */
  /** Host-side check; returns PC_STATUS_OK or writes a reason into msg (NUL-terminated). */
  pc_status (*can_implement)(const struct pc_variant* self, const void* args, char* msg,
                             size_t msg_len);
  /** Device workspace bytes `launch` needs for args (may be NULL: none). */
  size_t (*workspace_bytes)(const struct pc_variant* self, const void* args);
  /** Enqueues the kernel(s) on `stream` (a cudaStream_t); the workspace holds
   *  workspace_bytes(args) bytes, 256-byte aligned. Must not synchronize. */
  pc_status (*launch)(const struct pc_variant* self, const void* args, void* workspace,
                      void* stream, char* msg, size_t msg_len);
  void* user_data;             /**< opaque, for the plugin (the host passes `self` back) */
} pc_variant;

/** What the host hands a plugin's registration function. */
typedef struct pc_host {
  int abi_version; /**< PAGECHECK_PLUGIN_ABI_VERSION of the host */
  void* context;   /**< host's opaque context */
  /** Registers a copy of *variant; returns PC_STATUS_OK or PC_STATUS_INVALID_ARGUMENT. */
  pc_status (*add_variant)(void* context, const pc_variant* variant);
} pc_host;

/** Signature of the function a plugin exports as PAGECHECK_PLUGIN_REGISTER_SYMBOL. */
typedef int (*pc_register_fn)(const pc_host* host);

#ifdef __cplusplus
}
#endif

#endif /* PAGECHECK_PLUGIN_H */
