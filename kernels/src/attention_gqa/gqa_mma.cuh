#pragma once
/// The sm_80+ instructions of v3_gqa's tensor-core path, each a thin inline-PTX wrapper:
/// asynchronous 16-byte copies into shared memory (cp.async, zero-filling what is not read),
/// ldmatrix (plain and transposed), movmatrix and mma.sync m16n8k16 with float32 accumulators for
/// float16 and bfloat16 operands. PTX ISA, "Warp-level matrix instructions" and
/// "cp.async"; fragment layouts in gqa_tc_kernel.cuh.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace pagecheck::kernels::gqa {

/// Shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// Copies the first `bytes` (0..16) of the 16 bytes at `src` to shared `dst` and zero-fills the
/// rest; with bytes == 0 no byte is copied (L2 may still fetch the line of `src`, which must
/// stay an address inside the tensor). Bypasses L1 (.cg) and asks L2 to fetch the whole
/// 128-byte line (.L2::128B): 0-2.5% faster on the 8 v3_gqa shapes measured on the H200, none
/// slower (256 B gave nothing; docs/performance.md).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)),
               "l"(src), "r"(bytes)
               : "memory");
#endif
}
/// Ends the current group of cp.async copies.
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
/// Waits until at most N groups of this thread's copies are pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/// Four 8x8 b16 matrices; lane i gives the row address of matrix i / 8, row i % 8; register j
/// receives elements (lane / 4, 2 (lane % 4) + {0, 1}) of matrix j.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* row) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(row)));
#endif
}
/// As ldmatrix_x4, transposed: register j receives elements (2 (lane % 4) + {0, 1}, lane / 4).
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(row)));
#endif
}

/// The transpose of an 8x8 b16 matrix held one register a lane (lane i: row i / 4, columns
/// 2 (i % 4) + {0, 1}) into the same layout (movmatrix, sm_75+).
__device__ __forceinline__ uint32_t movmatrix_trans(uint32_t x) {
  uint32_t y = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
#endif
  return y;
}

/// c += a b for a 16x16 (row-major) and b 16x8 (column-major) tile of T (__half or
/// __nv_bfloat16), c 16x8 in float32.
template <class T>
__device__ __forceinline__ void mma_16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
#endif
}

/// Two floats rounded to nearest even into one register of two T (x in the low half).
template <class T>
__device__ __forceinline__ uint32_t pack2(float x, float y) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(x, y);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}

}  // namespace pagecheck::kernels::gqa
