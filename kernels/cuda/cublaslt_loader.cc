// SPDX-License-Identifier: Apache-2.0
#include "kernels/cuda/cublaslt_loader.h"

#include <cublas_api.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace focal::kernels {
namespace {

absl::StatusOr<const CublasLtApi*> Load() {
  const std::string soname = absl::StrCat("libcublasLt.so.", CUBLAS_VER_MAJOR);
  void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load ", soname, " (cuBLASLt of CUDA ", CUBLAS_VER_MAJOR,
        "): ", err ? err : "unknown error",
        "; install the CUDA toolkit's cuBLAS or add its lib64 folder to LD_LIBRARY_PATH"));
  }
  auto* api = new CublasLtApi();  // process lifetime, like the library itself
  bool ok = true;
  std::string missing;
  auto sym = [&](auto& fn, const char* name) {
    void* p = dlsym(lib, name);
    if (p == nullptr) {
      ok = false;
      missing = name;
      return;
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  sym(api->GetVersion, "cublasLtGetVersion");
  sym(api->GetStatusString, "cublasLtGetStatusString");
  sym(api->Create, "cublasLtCreate");
  sym(api->Destroy, "cublasLtDestroy");
  sym(api->MatmulDescCreate, "cublasLtMatmulDescCreate");
  sym(api->MatmulDescDestroy, "cublasLtMatmulDescDestroy");
  sym(api->MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  sym(api->MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  sym(api->MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  sym(api->MatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute");
  sym(api->MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  sym(api->MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  sym(api->MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  sym(api->MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  sym(api->MatmulAlgoConfigGetAttribute, "cublasLtMatmulAlgoConfigGetAttribute");
  sym(api->MatmulAlgoCapGetAttribute, "cublasLtMatmulAlgoCapGetAttribute");
  sym(api->MatmulAlgoCheck, "cublasLtMatmulAlgoCheck");
  sym(api->Matmul, "cublasLtMatmul");
  if (!ok) {
    delete api;
    return absl::FailedPreconditionError(
        absl::StrCat(soname, " lacks the symbol ", missing, " (version mismatch?)"));
  }
  // cublasLtGetVersion: major * 10000 + minor * 100 + patch.
  const size_t version = api->GetVersion();
  if (version / 10000 != CUBLAS_VER_MAJOR) {
    delete api;
    return absl::FailedPreconditionError(absl::StrCat(soname, " reports version ", version,
                                                      ", but this binary was built against ",
                                                      CUBLAS_VERSION));
  }
  return api;
}

}  // namespace

absl::StatusOr<const CublasLtApi*> LoadCublasLt() {
  static const absl::StatusOr<const CublasLtApi*>* loaded =
      new absl::StatusOr<const CublasLtApi*>(Load());
  return *loaded;
}

}  // namespace focal::kernels
