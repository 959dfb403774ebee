#pragma once
/// The table of one copy family (gather_cached_kv or reshape_and_cache) that launch_copy and
/// launch_vectorized_copy read (copy_dispatch.cuh): its direction, its launch names and its
/// kernel templates. A family's translation unit names only its scalar and vectorized kernel
/// templates; the staged x-split kernels and the names follow from the direction.
#include "copy/copy_dispatch.cuh"
#include "copy/copy_plan.h"
#include "copy/copy_xsplit_kernels.cuh"

namespace pagecheck::kernels {

/// A copy kernel as a type, so that a family's kernel templates can be template arguments
/// (through alias templates of KernelRef).
template <CopyKernel K>
struct KernelRef {
  static constexpr CopyKernel kernel = K;  ///< the kernel
};

/// The kernels of one copy family. Scalar<Codec> and Vectorized<Codec, kU, kPath> are
/// KernelRef alias templates of the family's one-thread-per-element and vectorized kernels.
template <bool kIsGather, template <typename> class Scalar,
          template <typename, int, copy_detail::CopyPath> class Vectorized>
struct CopyFamily {
  /// The vectorized kernels' name in launch errors.
  static constexpr const char* kName =
      kIsGather ? "gather_vectorized launch" : "reshape_vectorized launch";
  /// The scalar kernel's name in launch errors.
  static constexpr const char* kScalarName =
      kIsGather ? "gather_naive_kernel launch" : "reshape_scalar_kernel launch";

  template <typename Codec>
  static CopyKernel scalar() {
    return Scalar<Codec>::kernel;
  }
  template <typename Codec, int kU, copy_detail::CopyPath kPath>
  static CopyKernel vectorized() {
    return Vectorized<Codec, kU, kPath>::kernel;
  }
  template <typename Codec, int kU>
  static CopyKernel staged() {
    if constexpr (kIsGather) {
      return copy_detail::gather_xsplit_kernel<Codec, kU>;
    } else {
      return copy_detail::reshape_xsplit_kernel<Codec, kU>;
    }
  }
};

}  // namespace pagecheck::kernels
