// SPDX-License-Identifier: Apache-2.0
#include "kernels/cuda/cuda_gemm.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "kernels/cuda/cuda_plan.h"

namespace focal::kernels {
namespace {

// The batch count the heuristic is asked about before the algorithm is
// pinned: 16 tiles of 256 rows, a typical 4K-token scoring batch.
constexpr int32_t kCanonicalBatch = 16;
constexpr int kHeuristicResults = 16;

absl::Status LtError(const CublasLtApi* api, const char* what, cublasStatus_t s) {
  return absl::InternalError(absl::StrCat("cuBLASLt ", what, ": ", api->GetStatusString(s)));
}

#define FOCAL_LT_RETURN_IF_ERROR(api, call, what)                                     \
  do {                                                                                \
    const cublasStatus_t focal_lt_s_ = (call);                                        \
    if (focal_lt_s_ != CUBLAS_STATUS_SUCCESS) return LtError(api, what, focal_lt_s_); \
  } while (0)

// The largest power of two up to 256 dividing `bytes`: the alignment of
// every row of a matrix with that row pitch in a 256-byte aligned buffer.
uint32_t RowAlignment(int64_t bytes) {
  uint32_t a = 256;
  while (a > 1 && bytes % a != 0) a >>= 1;
  return a;
}

// The descriptors of one tiled call: D(n x R per tile, col-major) =
// op(A) . B with A = w stored (k x n) col-major (the (n, k) row-major
// weight) transposed, B = the x tile stored (k x R) col-major (row-major
// (R, k)), i.e. row-major out = x . w^T.
class Descriptors {
 public:
  explicit Descriptors(const CublasLtApi* api) : api_(api) {}
  ~Descriptors() {
    if (d_ != nullptr) api_->MatrixLayoutDestroy(d_);
    if (b_ != nullptr) api_->MatrixLayoutDestroy(b_);
    if (a_ != nullptr) api_->MatrixLayoutDestroy(a_);
    if (op_ != nullptr) api_->MatmulDescDestroy(op_);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;

  absl::Status Init(GemmOperands type, int64_t n, int64_t k, int32_t batch) {
    const cudaDataType_t ab = type == GemmOperands::kBf16 ? CUDA_R_16BF : CUDA_R_32F;
    // FP32 operands with CUBLAS_COMPUTE_32F: plain FP32 (TF32 would need
    // CUBLAS_COMPUTE_32F_FAST_TF32).
    FOCAL_LT_RETURN_IF_ERROR(api_, api_->MatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                             "MatmulDescCreate");
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    FOCAL_LT_RETURN_IF_ERROR(
        api_, api_->MatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)),
        "set TRANSA");
    FOCAL_LT_RETURN_IF_ERROR(
        api_, api_->MatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)),
        "set TRANSB");
    const int64_t rows = kCudaGemmRows;
    FOCAL_RETURN_IF_ERROR(Layout(&a_, ab, k, n, k, batch, 0));
    FOCAL_RETURN_IF_ERROR(Layout(&b_, ab, k, rows, k, batch, rows * k));
    FOCAL_RETURN_IF_ERROR(Layout(&d_, CUDA_R_32F, n, rows, n, batch, rows * n));
    return absl::OkStatus();
  }

  cublasLtMatmulDesc_t op() const { return op_; }
  cublasLtMatrixLayout_t a() const { return a_; }
  cublasLtMatrixLayout_t b() const { return b_; }
  cublasLtMatrixLayout_t d() const { return d_; }

 private:
  absl::Status Layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, int64_t rows, int64_t cols,
                      int64_t ld, int32_t batch, int64_t stride) {
    FOCAL_LT_RETURN_IF_ERROR(api_, api_->MatrixLayoutCreate(l, t, rows, cols, ld),
                             "MatrixLayoutCreate");
    FOCAL_LT_RETURN_IF_ERROR(api_,
                             api_->MatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                            &batch, sizeof(batch)),
                             "set BATCH_COUNT");
    FOCAL_LT_RETURN_IF_ERROR(
        api_,
        api_->MatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                       sizeof(stride)),
        "set STRIDED_BATCH_OFFSET");
    return absl::OkStatus();
  }

  const CublasLtApi* api_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CudaGemm>> CudaGemm::Create(cudaStream_t stream) {
  FOCAL_ASSIGN_OR_RETURN(const CublasLtApi* api, LoadCublasLt());
  cublasLtHandle_t handle = nullptr;
  const cublasStatus_t s = api->Create(&handle);
  if (s != CUBLAS_STATUS_SUCCESS) {
    return absl::FailedPreconditionError(
        absl::StrCat("cublasLtCreate failed: ", api->GetStatusString(s)));
  }
  void* workspace = nullptr;
  const cudaError_t e = cudaMalloc(&workspace, kGemmWorkspaceBytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    api->Destroy(handle);
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the ", kGemmWorkspaceBytes >> 20,
                     " MiB cuBLASLt workspace: ", cudaGetErrorString(e)));
  }
  return std::unique_ptr<CudaGemm>(new CudaGemm(api, handle, stream, workspace));
}

CudaGemm::~CudaGemm() {
  cudaStreamSynchronize(stream_);
  cudaFree(workspace_);
  api_->Destroy(handle_);
}

absl::StatusOr<CudaGemm::Pinned> CudaGemm::Algo(GemmOperands type, int64_t n, int64_t k) {
  const auto key = std::make_tuple(static_cast<int>(type), n, k);
  if (auto it = algos_.find(key); it != algos_.end()) return it->second;

  Descriptors canonical(api_), single(api_);
  FOCAL_RETURN_IF_ERROR(canonical.Init(type, n, k, kCanonicalBatch));
  FOCAL_RETURN_IF_ERROR(single.Init(type, n, k, 1));
  const size_t es = type == GemmOperands::kBf16 ? 2 : 4;
  const uint32_t align_x = RowAlignment(k * static_cast<int64_t>(es));
  const uint32_t align_out = RowAlignment(n * 4);
  int offered = 0;
  // Workspace-free algorithms first: they cannot keep partial sums anywhere.
  for (const uint64_t max_workspace : {uint64_t{0}, uint64_t{kGemmWorkspaceBytes}}) {
    cublasLtMatmulPreference_t pref = nullptr;
    FOCAL_LT_RETURN_IF_ERROR(api_, api_->MatmulPreferenceCreate(&pref), "MatmulPreferenceCreate");
    struct PrefGuard {
      const CublasLtApi* api;
      cublasLtMatmulPreference_t p;
      ~PrefGuard() { api->MatmulPreferenceDestroy(p); }
    } guard{api_, pref};
    FOCAL_LT_RETURN_IF_ERROR(
        api_,
        api_->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &max_workspace, sizeof(max_workspace)),
        "set MAX_WORKSPACE_BYTES");
    for (auto attr :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES}) {
      FOCAL_LT_RETURN_IF_ERROR(
          api_, api_->MatmulPreferenceSetAttribute(pref, attr, &align_x, sizeof(align_x)),
          "set MIN_ALIGNMENT");
    }
    for (auto attr :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
      FOCAL_LT_RETURN_IF_ERROR(
          api_, api_->MatmulPreferenceSetAttribute(pref, attr, &align_out, sizeof(align_out)),
          "set MIN_ALIGNMENT");
    }
    cublasLtMatmulHeuristicResult_t results[kHeuristicResults] = {};
    int returned = 0;
    const cublasStatus_t hs = api_->MatmulAlgoGetHeuristic(
        handle_, canonical.op(), canonical.a(), canonical.b(), canonical.d(), canonical.d(), pref,
        kHeuristicResults, results, &returned);
    if (hs == CUBLAS_STATUS_NOT_SUPPORTED) continue;  // none for this preference
    if (hs != CUBLAS_STATUS_SUCCESS) return LtError(api_, "MatmulAlgoGetHeuristic", hs);
    offered += returned;
    for (int i = 0; i < returned; ++i) {
      const cublasLtMatmulHeuristicResult_t& r = results[i];
      if (r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > max_workspace) continue;
      int32_t splitk = 1;
      uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
      size_t written = 0;
      if (api_->MatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                             sizeof(splitk), &written) != CUBLAS_STATUS_SUCCESS ||
          api_->MatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                             &scheme, sizeof(scheme),
                                             &written) != CUBLAS_STATUS_SUCCESS) {
        continue;
      }
      if (splitk > 1 || scheme != CUBLASLT_REDUCTION_SCHEME_NONE) continue;
      // The pinned algorithm must also run the one-tile call (the padded tail).
      cublasLtMatmulHeuristicResult_t check = {};
      if (api_->MatmulAlgoCheck(handle_, single.op(), single.a(), single.b(), single.d(),
                                single.d(), &r.algo, &check) != CUBLAS_STATUS_SUCCESS ||
          check.workspaceSize > max_workspace) {
        continue;
      }
      const Pinned pinned{r.algo, std::max(r.workspaceSize, check.workspaceSize)};
      algos_.emplace(key, pinned);
      return pinned;
    }
  }
  return absl::InternalError(
      absl::StrCat("cuBLASLt offers no batch-invariant algorithm (no split-K, no reduction) for ",
                   type == GemmOperands::kBf16 ? "BF16" : "FP32", " (", kCudaGemmRows, " x ", k,
                   ") . (", k, " x ", n, ") tiles (", offered, " candidates)"));
}

absl::Status CudaGemm::TiledMatMul(GemmOperands type, const void* x, int64_t tiles, const void* w,
                                   int64_t n, int64_t k, float* out) {
  if (tiles == 0 || n == 0) return absl::OkStatus();
  FOCAL_CHECK(tiles > 0 && tiles <= std::numeric_limits<int32_t>::max() && k > 0);
  FOCAL_ASSIGN_OR_RETURN(const Pinned pinned, Algo(type, n, k));
  Descriptors desc(api_);
  FOCAL_RETURN_IF_ERROR(desc.Init(type, n, k, static_cast<int32_t>(tiles)));
  const float alpha = 1.0f, beta = 0.0f;
  FOCAL_LT_RETURN_IF_ERROR(
      api_,
      api_->Matmul(handle_, desc.op(), &alpha, w, desc.a(), x, desc.b(), &beta, out, desc.d(), out,
                   desc.d(), &pinned.algo, pinned.workspace > 0 ? workspace_ : nullptr,
                   // All of it: a call with more tiles than the two checked
                   // shapes may ask for more than they did.
                   pinned.workspace > 0 ? kGemmWorkspaceBytes : 0, stream_),
      "Matmul");
  return absl::OkStatus();
}

}  // namespace focal::kernels
