/* pagecheck kernel plugin ABI, version 2: the one interface through which every kernel variant,
 * built-in or external, is registered, described, checked and launched.
 *
 * A plugin is a shared library exporting
 *     const int pagecheck_plugin_abi_version;          (PAGECHECK_PLUGIN_DECLARE_ABI())
 *     int pagecheck_plugin_register(const pc_host* host);
 * The host loads plugins of version 2 and, through pagecheck/plugin_v1.h, of version 1; the
 * registration function calls host->add_variant (version 1: host->add_variant_v1) once per
 * variant and returns 0 (non-zero = failure).
 *
 * The structs mirror pagecheck's problem vocabulary (docs/design.md) field for field. Every
 * struct that may grow starts with `struct_size` = sizeof of the struct the writer was built
 * with: a reader accepts a smaller size (fields past it read as zero) and never reads past it.
 * All pointers given to a variant are device pointers unless stated otherwise; all strides are
 * in elements of the tensor's own dtype and 64-bit. Plain C, no CUDA headers: streams travel as
 * `void*` (cudaStream_t). docs/plugins.md describes every field and how to link a plugin.
 */
#ifndef PAGECHECK_PLUGIN_H
#define PAGECHECK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version this header describes. */
#define PAGECHECK_PLUGIN_ABI_VERSION 2
/** The oldest version the host still loads (version 1: pagecheck/plugin_v1.h). */
#define PAGECHECK_PLUGIN_ABI_OLDEST 1

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

/** Storage dtypes (values shared with version 1, which knows the first three). */
typedef enum pc_dtype {
  PC_DTYPE_FLOAT32 = 0,  /**< IEEE binary32 */
  PC_DTYPE_FLOAT16 = 1,  /**< IEEE binary16 */
  PC_DTYPE_BFLOAT16 = 2, /**< bfloat16 */
  PC_DTYPE_FP8_E4M3 = 3, /**< OCP fp8 E4M3 (e4m3fn: max 448, NaN 0x7f/0xff, no infinities) */
  PC_DTYPE_FP8_E5M2 = 4, /**< OCP fp8 E5M2 (max 57344, infinities and NaNs) */
} pc_dtype;

typedef enum pc_family {
  PC_FAMILY_PAGED_ATTENTION = 0,   /**< attention of query rows over the paged cache */
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

/** Page layout tag (for capabilities; offsets always come from the strides). */
typedef enum pc_cache_kind {
  PC_CACHE_X_SPLIT = 0, /**< key [blocks, heads, head_size/x, block_size, x], value
                             [blocks, heads, head_size, block_size] */
  PC_CACHE_NHD = 1,     /**< page [block_size, heads, head_size] */
  PC_CACHE_HND = 2,     /**< page [heads, block_size, head_size] */
} pc_cache_kind;

/** Scales of an fp8 cache: value = code * scale. */
typedef enum pc_scale_kind {
  PC_SCALE_NONE = 0,        /**< no scales (16/32-bit caches) */
  PC_SCALE_PER_TENSOR = 1,  /**< k_scale[0], v_scale[0] */
  PC_SCALE_PER_KV_HEAD = 2, /**< k_scale[kv_head], v_scale[kv_head] */
} pc_scale_kind;

/** Strides of one cache tensor. Element (block, head, slot, dim) is at
 *  block*block + head*head + slot*slot + (dim / dim_split)*group + (dim % dim_split)*dim. */
typedef struct pc_cache_strides {
  int64_t block;     /**< between blocks (pages) */
  int64_t head;      /**< between kv heads */
  int64_t slot;      /**< between token slots of a block */
  int64_t group;     /**< between dim groups (0 when dim_split == head_size) */
  int64_t dim;       /**< between dims of a group */
  int64_t dim_split; /**< dims per group: x = 16 / element size for x-split keys, else head_size */
} pc_cache_strides;

/** The paged KV cache. */
typedef struct pc_kv_cache {
  uint32_t struct_size;     /**< sizeof(pc_kv_cache) of the writer */
  pc_cache_kind kind;       /**< page layout tag */
  pc_dtype dtype;           /**< storage dtype of K and V (may be fp8) */
  pc_scale_kind scale_kind; /**< fp8 scales */
  int64_t num_blocks;       /**< physical blocks in the pool */
  int64_t num_kv_heads;     /**< key/value heads */
  int64_t head_size;        /**< elements per head */
  int64_t block_size;       /**< token slots per block */
  pc_cache_strides key;     /**< key strides */
  pc_cache_strides value;   /**< value strides */
  int32_t combined;         /**< non-zero: K and V are halves of one allocation */
  int64_t value_base;       /**< combined: elements from the key pointer to the value pointer */
  const float* k_scale;     /**< PER_TENSOR: 1 float, PER_KV_HEAD: num_kv_heads; else NULL */
  const float* v_scale;     /**< as k_scale, for V */
} pc_kv_cache;

/** The ragged batch of an attention call. Query row i of sequence s (0 <= i < q_len(s)) sits
 *  at position context_lens[s] - q_len(s) + i. */
typedef struct pc_ragged_batch {
  uint32_t struct_size;        /**< sizeof(pc_ragged_batch) of the writer */
  int64_t num_seqs;            /**< sequences */
  int64_t num_query_tokens;    /**< query rows in all (num_seqs when query_start is NULL) */
  int64_t max_query_len;       /**< host-side bound on q_len(s) (1 for plain decode) */
  const int32_t* query_start;  /**< [num_seqs + 1] cumulative query rows, or NULL: one each */
  const int32_t* context_lens; /**< [num_seqs] cached tokens incl. the new ones; 0 = padding row */
  const int32_t* block_table;  /**< [num_seqs, block_table_stride] physical block indices */
  int64_t block_table_stride;  /**< elements between block-table rows (>= max_blocks_per_seq) */
  int64_t max_blocks_per_seq;  /**< block-table columns a sequence may use */
  int64_t max_context_len;     /**< host-side bound: >= every context_lens[s] (may be larger) */
} pc_ragged_batch;

/** Attention features; order of operations in docs/reference.md. */
typedef struct pc_attention_features {
  uint32_t struct_size;      /**< sizeof(pc_attention_features) of the writer */
  const float* alibi_slopes; /**< [num_heads] or NULL: logit += slope * (t - p) */
  const float* sinks;        /**< [num_heads] or NULL: a logit per head in the denominator */
  int64_t window;            /**< 0 = none; W: query at p attends to t > p - W only */
  float soft_cap;            /**< 0 = none; cap: logit = cap * tanh(scale q.k / cap) */
  int32_t causal;            /**< non-zero: new tokens attend causally to each other */
} pc_attention_features;

/** Arguments of one paged-attention call. */
typedef struct pc_paged_attention_args {
  uint32_t struct_size;           /**< sizeof(pc_paged_attention_args) of the writer */
  pc_dtype dtype;                 /**< dtype of query and output (not fp8) */
  int64_t num_heads;              /**< query heads; a multiple of cache.num_kv_heads */
  float scale;                    /**< logit scale */
  const void* query;              /**< [num_query_tokens, num_heads, head_size] */
  int64_t query_stride_token;     /**< elements between query rows */
  int64_t query_stride_head;      /**< elements between query heads */
  const void* key_cache;          /**< key tensor of `cache` */
  const void* value_cache;        /**< value tensor of `cache` */
  pc_kv_cache cache;              /**< cache descriptor */
  pc_ragged_batch batch;          /**< sequences, contexts, block table */
  pc_attention_features features; /**< ALiBi, sinks, window, soft-cap, causal */
  void* out;                      /**< [num_query_tokens, num_heads, head_size] */
  int64_t out_stride_token;       /**< elements between output rows */
  int64_t out_stride_head;        /**< elements between output heads */
} pc_paged_attention_args;

/** Arguments of one gather_cached_kv call (cache -> contiguous). Rows whose slot is -1 must be
 *  left untouched. */
typedef struct pc_gather_args {
  uint32_t struct_size;        /**< sizeof(pc_gather_args) of the writer */
  pc_dtype dtype;              /**< dtype of key_out / value_out */
  int32_t dequantize;          /**< non-zero: write code * scale in dtype; zero: raw elements
                                    (dtype == cache.dtype) */
  int64_t num_tokens;          /**< rows of key_out / value_out */
  const void* key_cache;       /**< key tensor of `cache` */
  const void* value_cache;     /**< value tensor of `cache` */
  pc_kv_cache cache;           /**< cache descriptor */
  const int64_t* slot_mapping; /**< [num_tokens] block * block_size + offset, or -1 */
  void* key_out;               /**< [num_tokens, num_kv_heads, head_size] */
  int64_t key_stride_token;    /**< elements between key_out rows */
  int64_t key_stride_head;     /**< elements between key_out heads */
  void* value_out;             /**< [num_tokens, num_kv_heads, head_size] */
  int64_t value_stride_token;  /**< elements between value_out rows */
  int64_t value_stride_head;   /**< elements between value_out heads */
} pc_gather_args;

/** Arguments of one reshape_and_cache call (contiguous -> cache). Slot -1 skips the token. An
 *  fp8 cache receives quantize(value / scale) by the rule of docs/dtypes.md. */
typedef struct pc_reshape_and_cache_args {
  uint32_t struct_size;        /**< sizeof(pc_reshape_and_cache_args) of the writer */
  pc_dtype dtype;              /**< dtype of key / value */
  int64_t num_tokens;          /**< rows of key / value */
  const void* key;             /**< [num_tokens, num_kv_heads, head_size] */
  int64_t key_stride_token;    /**< elements between key rows */
  int64_t key_stride_head;     /**< elements between key heads */
  const void* value;           /**< [num_tokens, num_kv_heads, head_size] */
  int64_t value_stride_token;  /**< elements between value rows */
  int64_t value_stride_head;   /**< elements between value heads */
  void* key_cache;             /**< key tensor of `cache` */
  void* value_cache;           /**< value tensor of `cache` */
  pc_kv_cache cache;           /**< cache descriptor */
  const int64_t* slot_mapping; /**< [num_tokens] block * block_size + offset, or -1 */
} pc_reshape_and_cache_args;

/** The device a call will run on, for can_implement / workspace_bytes / launch (the host always
 *  passes one, filled once per device from cudaGetDeviceProperties). */
typedef struct pc_device_info {
  uint32_t struct_size;             /**< sizeof(pc_device_info) of the writer */
  int32_t device;                   /**< CUDA device index (current when the host calls) */
  int32_t sm_count;                 /**< streaming multiprocessors */
  int32_t cc_major;                 /**< compute capability, major */
  int32_t cc_minor;                 /**< compute capability, minor */
  int64_t max_shared_per_block;     /**< opt-in shared memory per block, bytes */
  int64_t l2_bytes;                 /**< L2 cache size, bytes */
} pc_device_info;

/** Capability flags of a variant (pc_variant.caps). A problem that needs a flag the variant
 *  does not declare is never given to it. */
enum {
  PC_CAP_ALIBI = 1u << 0,            /**< features.alibi_slopes != NULL */
  PC_CAP_LARGE_CACHE = 1u << 1,      /**< correct for tensors beyond 2^31 elements */
  PC_CAP_TOKEN_STRIDE = 1u << 2,     /**< token strides above num_heads * head_size with packed
                                          heads (a slice of a fused QKV tensor) */
  PC_CAP_HEAD_STRIDE = 1u << 3,      /**< head strides above head_size (inputs) */
  PC_CAP_STRIDED_OUTPUT = 1u << 4,   /**< non-packed output strides */
  PC_CAP_CACHE_PAD_SHARED = 1u << 5, /**< padded cache strides, the same for K and V */
  PC_CAP_CACHE_PAD = 1u << 6,        /**< padded cache strides, K and V independently */
  PC_CAP_COMBINED_KV = 1u << 7,      /**< K and V halves of one allocation */
  PC_CAP_SINKS = 1u << 8,            /**< features.sinks != NULL */
  PC_CAP_WINDOW = 1u << 9,           /**< features.window > 0 */
  PC_CAP_SOFT_CAP = 1u << 10,        /**< features.soft_cap > 0 */
  PC_CAP_NON_CAUSAL = 1u << 11,      /**< features.causal == 0 with q_len > 1 */
  PC_CAP_DEQUANTIZE = 1u << 12,      /**< gather with dequantize != 0 */
  PC_CAP_FULL_RANGE = 1u << 13,      /**< correct for inputs up to the dtype's largest finite
                                          value (copies: K/V of every magnitude; attention: V
                                          near the largest finite value, docs/verify.md) */
};

/** Accumulator of a dot product or weighted sum. */
typedef enum pc_accum {
  PC_ACCUM_FLOAT32 = 0, /**< float32 (or wider) */
  PC_ACCUM_STORAGE = 1, /**< the query dtype (fp16 / bf16 partial sums) */
} pc_accum;

/** Intermediates a variant rounds to the query dtype (pc_precision.rounded). */
enum {
  PC_ROUND_LOGITS = 1u << 0,          /**< scaled q.k before the softmax */
  PC_ROUND_WEIGHTS = 1u << 1,         /**< softmax weights exp(l - m) (or normalized p) */
  PC_ROUND_PRODUCTS = 1u << 2,        /**< weight x value products before summation */
  PC_ROUND_PARTITION_OUTPUTS = 1u << 3, /**< per-partition outputs before the merge */
  PC_ROUND_PARTITION_SUMS = 1u << 4,  /**< per-partition max / sum of exp before the merge */
};

/** How a variant computes (docs/tolerances.md derives the bound of each declaration). All
 *  zero = pagecheck's strict float32 model. */
typedef struct pc_precision {
  uint32_t struct_size;      /**< sizeof(pc_precision) of the writer */
  pc_accum qk_accum;         /**< accumulator of q.k */
  pc_accum pv_accum;         /**< accumulator of sum p v */
  uint32_t rounded;          /**< PC_ROUND_* flags */
  int32_t storage_sum_terms; /**< a PC_ACCUM_STORAGE sum keeps partial sums in the query dtype
                                  over up to this many terms before they join a float32 sum
                                  (0 = the whole sum in the query dtype); must be 0 when
                                  neither accumulator is PC_ACCUM_STORAGE */
} pc_precision;

/** What a variant writes into the output rows of a context-length-0 sequence. */
typedef enum pc_context0 {
  PC_CONTEXT0_UNSUPPORTED = 0, /**< context 0 is never given to the variant */
  PC_CONTEXT0_UNTOUCHED = 1,   /**< the rows keep their contents */
  PC_CONTEXT0_ZEROS = 2,       /**< the rows become +0 */
} pc_context0;

/** A kernel variant. Every pointer in it must stay valid while the plugin is loaded. `args`
 *  points to the family's args struct (pc_paged_attention_args, pc_gather_args or
 *  pc_reshape_and_cache_args). */
typedef struct pc_variant {
  uint32_t struct_size;           /**< sizeof(pc_variant) of the writer */
  const char* name;               /**< unique within the family, e.g. "v1_shared_q" */
  const char* description;        /**< one line */
  pc_family family;               /**< which args struct `args` points to */
  uint32_t dtype_mask;            /**< bit (1u << pc_dtype) per query / token dtype */
  uint32_t kv_dtype_mask;         /**< bit per cache dtype (0 = the same as dtype_mask, and the
                                       cache dtype equals the token dtype) */
  uint32_t cache_kind_mask;       /**< bit (1u << pc_cache_kind) per page layout (0 = x-split) */
  uint32_t scale_kind_mask;       /**< bit (1u << pc_scale_kind) per fp8 scale kind (0 = none) */
  const int32_t* head_sizes;      /**< supported head sizes */
  int32_t num_head_sizes;         /**< entries in head_sizes (> 0) */
  const int32_t* block_sizes;     /**< supported block sizes */
  int32_t num_block_sizes;        /**< entries in block_sizes (> 0) */
  uint64_t caps;                  /**< PC_CAP_* flags */
  int32_t max_query_len;          /**< largest q_len per sequence (0 or 1 = decode only) */
  const int32_t* partition_sizes; /**< split-K partition sizes (tokens) the variant may use */
  int32_t num_partition_sizes;    /**< entries in partition_sizes (0 = no split-K) */
  pc_precision precision;         /**< how it computes (attention) */
  pc_context0 context0;           /**< context-length-0 rows (attention) */
  int32_t nondeterministic;       /**< non-zero: outputs may differ bit for bit between runs */
  /** Host-side check; returns PC_STATUS_OK or writes a reason into msg (NUL-terminated). */
  pc_status (*can_implement)(const struct pc_variant* self, const pc_device_info* device,
                             const void* args, char* msg, size_t msg_len);
  /** Device workspace bytes `launch` needs for args (may be NULL: none). */
  size_t (*workspace_bytes)(const struct pc_variant* self, const pc_device_info* device,
                            const void* args);
  /** Enqueues the kernel(s) on `stream` (a cudaStream_t); the workspace holds
   *  workspace_bytes(args) bytes, 256-byte aligned. Must not synchronize. */
  pc_status (*launch)(const struct pc_variant* self, const pc_device_info* device,
                      const void* args, void* workspace, void* stream, char* msg, size_t msg_len);
  void* user_data; /**< opaque, for the plugin (the host passes `self` back) */
} pc_variant;

struct pc_variant_v1;

/** What the host hands a plugin's registration function. The first three fields are those of
 *  version 1 (a version-1 plugin calls add_variant_v1 through its own definition). */
typedef struct pc_host {
  int abi_version; /**< the version the host speaks in this call: the one the plugin declared
                        (2, or 1 for a version-1 plugin, which checks it against its own) */
  void* context;   /**< host's opaque context */
  /** Registers a version-1 variant (pagecheck/plugin_v1.h). */
  pc_status (*add_variant_v1)(void* context, const struct pc_variant_v1* variant);
  /** Registers a copy of *variant; returns PC_STATUS_OK or PC_STATUS_INVALID_ARGUMENT. */
  pc_status (*add_variant)(void* context, const pc_variant* variant);
} pc_host;

/** Signature of the function a plugin exports as PAGECHECK_PLUGIN_REGISTER_SYMBOL. */
typedef int (*pc_register_fn)(const pc_host* host);

#ifdef __cplusplus
}
#endif

#endif /* PAGECHECK_PLUGIN_H */
