// SPDX-License-Identifier: Apache-2.0
// Device memory of the CUDA backend: a caching cudaMalloc allocator and the
// pinned staging ring that carries small host arrays (tokens, positions,
// scales, the attention work list) to the device on the backend's stream.
// See kernels/cuda/README.md ("Memory and errors").
#ifndef FOCAL_KERNELS_CUDA_DEVICE_MEMORY_H_
#define FOCAL_KERNELS_CUDA_DEVICE_MEMORY_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <vector>

#include "absl/types/span.h"

namespace focal::kernels {

// A caching cudaMalloc allocator for one device, shared (shared_ptr) by the
// backend and the deleters of every Buffer it hands out, so a Buffer may
// outlive the backend. Freed blocks are kept by rounded size and reused by
// later allocations of that size; all use is ordered on the backend's single
// stream, so a block freed while queued kernels still read it is only
// rewritten by work queued after them. On cudaMalloc failure the cache is
// released and the allocation retried once.
class DeviceAllocator {
 public:
  explicit DeviceAllocator(int device) : device_(device) {}
  ~DeviceAllocator() { ReleaseCached(); }
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // At least `bytes` of device memory in *out (nullptr on failure). The
  // runtime's last error is cleared on failure.
  cudaError_t Allocate(size_t bytes, void** out);
  // Returns a block of Allocate(bytes) to the cache.
  void Free(void* p, size_t bytes);
  // Returns every cached block to the driver (cudaFree synchronises).
  void ReleaseCached();

  // Bytes taken from the driver (in use or cached) and their peak.
  size_t held_bytes();
  size_t peak_bytes();
  void ResetPeak();
  // Bytes cached for reuse (free, but not returned to the driver).
  size_t cached_bytes();

 private:
  // 512 B granules below 1 MiB, 2 MiB granules above: few distinct sizes, at
  // most 2 MiB of slack on a large tensor.
  static size_t RoundUp(size_t bytes);

  const int device_;
  std::mutex mu_;
  std::multimap<size_t, void*> cache_;
  size_t cached_bytes_ = 0;
  size_t held_bytes_ = 0;
  size_t peak_bytes_ = 0;
};

// Pinned host memory and a device mirror of the same size, used as a ring:
// Stage copies host arrays into the next free region and queues one
// host-to-device copy of it on the stream, so launches that read them stay
// asynchronous. Not thread-safe (the backend's ops run on one thread).
class StagingRing {
 public:
  struct Part {
    const void* data;
    size_t bytes;
  };
  template <typename T>
  static Part PartOf(absl::Span<const T> s) {
    return {s.data(), s.size() * sizeof(T)};
  }

  // `stream` is the backend's; the ring does not own it.
  explicit StagingRing(cudaStream_t stream) : stream_(stream) {}
  ~StagingRing() { Release(); }
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // Copies `parts` into one region of the ring (each part 16-byte aligned),
  // ordered on the stream before any later launch, and sets *out to the
  // device address of each part, valid for work queued before the ring next
  // wraps (generation() then changes). Everything one launch reads must come
  // from one call (a later call may reallocate the ring). On failure returns
  // the CUDA error (the caller records it and clears the runtime's last
  // error) with *out empty.
  cudaError_t Stage(std::initializer_list<Part> parts, std::vector<const void*>* out);

  // Frees both halves (the caller has synchronised the stream).
  void Release();

  // Device bytes held (the mirror; the pinned half is host memory).
  size_t device_bytes() const { return ring_bytes_; }
  // Bumped whenever staged pointers expire (wrap or regrowth).
  uint64_t generation() const { return generation_; }

 private:
  cudaStream_t stream_;
  char* pinned_ = nullptr;
  char* staging_ = nullptr;
  size_t ring_bytes_ = 0, ring_offset_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_CUDA_DEVICE_MEMORY_H_
