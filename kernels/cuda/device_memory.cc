// SPDX-License-Identifier: Apache-2.0
#include "kernels/cuda/device_memory.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace focal::kernels {

cudaError_t DeviceAllocator::Allocate(size_t bytes, void** out) {
  const size_t size = RoundUp(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cache_.find(size); it != cache_.end()) {
      *out = it->second;
      cache_.erase(it);
      cached_bytes_ -= size;
      return cudaSuccess;
    }
  }
  cudaSetDevice(device_);
  cudaError_t e = cudaMalloc(out, size);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it so later launches don't report
                         // it
    ReleaseCached();
    e = cudaMalloc(out, size);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    *out = nullptr;
    return e;
  }
  std::lock_guard<std::mutex> lock(mu_);
  held_bytes_ += size;
  peak_bytes_ = std::max(peak_bytes_, held_bytes_);
  return e;
}

void DeviceAllocator::Free(void* p, size_t bytes) {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  const size_t size = RoundUp(bytes);
  cache_.emplace(size, p);
  cached_bytes_ += size;
}

void DeviceAllocator::ReleaseCached() {
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.empty()) return;
  cudaSetDevice(device_);
  for (auto& [size, p] : cache_) cudaFree(p);
  cache_.clear();
  held_bytes_ -= cached_bytes_;
  cached_bytes_ = 0;
}

size_t DeviceAllocator::held_bytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return held_bytes_;
}

size_t DeviceAllocator::peak_bytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_bytes_;
}

void DeviceAllocator::ResetPeak() {
  std::lock_guard<std::mutex> lock(mu_);
  peak_bytes_ = held_bytes_;
}

size_t DeviceAllocator::cached_bytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_bytes_;
}

size_t DeviceAllocator::RoundUp(size_t bytes) {
  bytes = std::max<size_t>(bytes, 256);
  const size_t g = bytes < (size_t{1} << 20) ? 512 : (size_t{2} << 20);
  return (bytes + g - 1) / g * g;
}

cudaError_t StagingRing::Stage(std::initializer_list<Part> parts, std::vector<const void*>* out) {
  out->clear();
  size_t bytes = 0;
  for (const Part& part : parts) bytes += (part.bytes + 15) / 16 * 16;
  const size_t need = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  if (need > ring_bytes_ / 2) {
    // Grow: wait until nothing reads the old ring, then replace it.
    if (const cudaError_t e = cudaStreamSynchronize(stream_); e != cudaSuccess) return e;
    Release();
    ring_bytes_ = std::max<size_t>(size_t{16} << 20, 4 * need);
    ring_offset_ = 0;
    ++generation_;
    cudaError_t e =
        cudaHostAlloc(reinterpret_cast<void**>(&pinned_), ring_bytes_, cudaHostAllocDefault);
    if (e == cudaSuccess) e = cudaMalloc(reinterpret_cast<void**>(&staging_), ring_bytes_);
    if (e != cudaSuccess) {
      Release();
      return e;
    }
  }
  if (ring_offset_ + need > ring_bytes_) {
    // Wrap: the pinned area may still feed queued copies and the device area
    // queued kernels; wait for them.
    if (const cudaError_t e = cudaStreamSynchronize(stream_); e != cudaSuccess) return e;
    ring_offset_ = 0;
    ++generation_;
  }
  char* h = pinned_ + ring_offset_;
  char* d = staging_ + ring_offset_;
  ring_offset_ += need;
  std::vector<const void*> staged;
  size_t off = 0;
  for (const Part& part : parts) {
    if (part.bytes > 0) std::memcpy(h + off, part.data, part.bytes);
    staged.push_back(d + off);
    off += (part.bytes + 15) / 16 * 16;
  }
  if (bytes > 0) {
    const cudaError_t e = cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, stream_);
    if (e != cudaSuccess) return e;
  }
  *out = std::move(staged);
  return cudaSuccess;
}

void StagingRing::Release() {
  if (pinned_ != nullptr) cudaFreeHost(pinned_);
  if (staging_ != nullptr) cudaFree(staging_);
  pinned_ = staging_ = nullptr;
  ring_bytes_ = 0;
}

}  // namespace focal::kernels
