#pragma once
/// Host interface of the planted kernels (internal): one simple kernel per family with a
/// runtime bug switch.
#include <cstdint>

#include "pagecheck/plugin.h"

namespace pagecheck::verify::planted {

/// Which bug a launch plants (kNone = the correct control kernel).
enum class Bug : int {
  kNone = 0,
  kSkipLastPartialBlock,
  kContextOffByOne,
  kWrongKvHeadGqa,
  kOtherSeqBlockTableRow,
  kScaleTwice,
  kScaleMissing,
  kPartitionMaxOnly,
  kZeroWeightNan,
  kOffset32,
  kMissingSyncthreads,
  kGatherSlotMinus1,
  kGatherXSplitOffset,
  kReshapeSlotMinus1,
  kAtomicValueRace,
};

/// Tokens per partition of the split-K planted kernel (the v2_split kernel's size).
inline constexpr int64_t kPlantedPartition = 256;
/// Threads per block of every planted kernel.
inline constexpr int kPlantedThreads = 128;

/// Workspace bytes of the split-K kernel.
size_t planted_attention_workspace(const pc_paged_attention_args& a, bool split);
/// Largest context the one-pass kernel holds in shared memory.
int64_t planted_max_context();
/// Enqueues the planted attention kernel(s); returns the launch error text or "" on success.
const char* launch_planted_attention(const pc_paged_attention_args& a, Bug bug, bool split,
                                     void* workspace, void* stream);
/// Enqueues the planted gather / reshape kernel.
const char* launch_planted_gather(const pc_gather_args& a, Bug bug, void* stream);
const char* launch_planted_reshape(const pc_reshape_and_cache_args& a, Bug bug, void* stream);

}  // namespace pagecheck::verify::planted
