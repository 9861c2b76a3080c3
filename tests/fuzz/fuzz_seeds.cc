// SPDX-License-Identifier: Apache-2.0
// fuzz_seeds OUT_DIR: writes the seed inputs that no file in the repository
// provides (small GGUF checkpoints, sentencepiece models, sharded results
// files, resume logs, raw safetensors files and an index matching
// fuzz_safetensors_index's shards) under OUT_DIR/<target>/, each built here
// from scratch, and checks that each is accepted by the reader it seeds
// (a seed the product refuses would only seed its error paths).
// bench/fuzz.sh adds the seeds it derives from tests/testdata and
// datasets/samples.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model/gguf.h"
#include "model/gguf_model.h"
#include "model/safetensors.h"
#include "model/tokenizer_loader.h"
#include "model/weights.h"
#include "reports/merge.h"
#include "reports/results_writer.h"

namespace {

namespace fs = std::filesystem;
using focal::model::GgufFile;

std::string out_dir;
int failures = 0;

std::string Write(const std::string& target, const std::string& name, const std::string& bytes) {
  const fs::path dir = fs::path(out_dir) / target;
  fs::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

void Check(const std::string& what, const absl::Status& st) {
  if (!st.ok()) {
    std::cerr << "fuzz_seeds: " << what << " is not accepted: " << st << "\n";
    ++failures;
  }
}

// --- GGUF (version 3, little-endian hosts) -------------------------------------

template <typename T>
std::string Le(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}
std::string GStr(const std::string& s) { return Le<uint64_t>(s.size()) + s; }

class Gguf {
 public:
  void Str(const std::string& k, const std::string& v) { Kv(k, 8, GStr(v)); }
  void U32(const std::string& k, uint32_t v) { Kv(k, 4, Le(v)); }
  void I32(const std::string& k, int32_t v) { Kv(k, 5, Le(v)); }
  void F32(const std::string& k, float v) { Kv(k, 6, Le(v)); }
  void Bool(const std::string& k, bool v) { Kv(k, 7, std::string(1, v ? 1 : 0)); }
  void StrArray(const std::string& k, const std::vector<std::string>& v) {
    std::string s = Le<uint32_t>(8) + Le<uint64_t>(v.size());
    for (const std::string& x : v) s += GStr(x);
    Kv(k, 9, s);
  }
  void F32Array(const std::string& k, const std::vector<float>& v) {
    std::string s = Le<uint32_t>(6) + Le<uint64_t>(v.size());
    for (float x : v) s += Le(x);
    Kv(k, 9, s);
  }
  void I32Array(const std::string& k, const std::vector<int32_t>& v) {
    std::string s = Le<uint32_t>(5) + Le<uint64_t>(v.size());
    for (int32_t x : v) s += Le(x);
    Kv(k, 9, s);
  }
  // dims innermost first; `data` as stored.
  void Tensor(const std::string& name, uint32_t type, std::vector<uint64_t> dims,
              const std::string& data) {
    tensors_.push_back({name, type, std::move(dims), data});
  }
  // F32 tensor of dims (innermost first) with small deterministic values.
  void F32Tensor(const std::string& name, std::vector<uint64_t> dims) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    std::string data;
    for (uint64_t i = 0; i < n; ++i) data += Le(static_cast<float>((i % 7) * 0.125 - 0.375));
    Tensor(name, 0, std::move(dims), data);
  }
  // F16 (type 1): 0x3c00 (1.0) and 0xb800 (-0.5) alternating.
  void F16Tensor(const std::string& name, std::vector<uint64_t> dims) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    std::string data;
    for (uint64_t i = 0; i < n; ++i) data += Le<uint16_t>(i % 2 ? 0xb800 : 0x3c00);
    Tensor(name, 1, std::move(dims), data);
  }
  // Q8_0 (type 8): blocks of an f16 scale (0.5) and 32 int8 values.
  void Q8Tensor(const std::string& name, std::vector<uint64_t> dims) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    std::string data;
    for (uint64_t b = 0; b < n / 32; ++b) {
      data += Le<uint16_t>(0x3800);
      for (int i = 0; i < 32; ++i) data += static_cast<char>((i * 7 + b) % 21 - 10);
    }
    Tensor(name, 8, std::move(dims), data);
  }

  std::string Build() const {
    constexpr uint64_t kAlign = 32;
    std::string s =
        "GGUF" + Le<uint32_t>(3) + Le<uint64_t>(tensors_.size()) + Le<uint64_t>(kvs_.size());
    for (const std::string& kv : kvs_) s += kv;
    std::string data;
    for (const T& t : tensors_) {
      while (data.size() % kAlign) data += '\0';
      s += GStr(t.name) + Le<uint32_t>(t.dims.size());
      for (uint64_t d : t.dims) s += Le(d);
      s += Le(t.type) + Le<uint64_t>(data.size());
      data += t.data;
    }
    while (s.size() % kAlign) s += '\0';
    return s + data;
  }

 private:
  struct T {
    std::string name;
    uint32_t type;
    std::vector<uint64_t> dims;
    std::string data;
  };
  void Kv(const std::string& k, uint32_t type, const std::string& v) {
    kvs_.push_back(GStr(k) + Le(type) + v);
  }
  std::vector<std::string> kvs_;
  std::vector<T> tensors_;
};

// A one-layer llama of width `hidden` (2 heads, 1 kv head, ffn `ffn`).
void LlamaModel(Gguf& g, uint32_t hidden, uint32_t ffn, uint32_t vocab, bool quantized_embd) {
  g.Str("general.architecture", "llama");
  g.Str("general.name", "fuzz-seed");
  g.U32("llama.block_count", 1);
  g.U32("llama.context_length", 64);
  g.U32("llama.embedding_length", hidden);
  g.U32("llama.feed_forward_length", ffn);
  g.U32("llama.attention.head_count", 2);
  g.U32("llama.attention.head_count_kv", 1);
  g.F32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  g.F32("llama.rope.freq_base", 10000.0f);
  const uint64_t kv = hidden / 2;
  if (quantized_embd) {
    g.Q8Tensor("token_embd.weight", {hidden, vocab});
  } else {
    g.F32Tensor("token_embd.weight", {hidden, vocab});
  }
  g.F32Tensor("output_norm.weight", {hidden});
  g.F32Tensor("blk.0.attn_norm.weight", {hidden});
  g.F16Tensor("blk.0.attn_q.weight", {hidden, hidden});
  g.F32Tensor("blk.0.attn_k.weight", {hidden, kv});
  g.F32Tensor("blk.0.attn_v.weight", {hidden, kv});
  g.F16Tensor("blk.0.attn_output.weight", {hidden, hidden});
  g.F32Tensor("blk.0.ffn_norm.weight", {hidden});
  g.F32Tensor("blk.0.ffn_gate.weight", {hidden, ffn});
  g.F32Tensor("blk.0.ffn_up.weight", {hidden, ffn});
  g.F32Tensor("blk.0.ffn_down.weight", {ffn, hidden});
}

void CheckGguf(const std::string& path, bool expect_tokenizer) {
  auto f = GgufFile::Open(path);
  Check(path, f.status());
  if (!f.ok()) return;
  std::shared_ptr<const GgufFile> g = std::move(*f);
  auto config = focal::model::GgufModelConfig(*g);
  Check(path + " (config)", config.status());
  if (config.ok()) {
    auto store = focal::model::GgufTensorStore(g, *config, focal::model::GgufData::kNow);
    Check(path + " (tensors)", store.status());
    if (store.ok()) {
      Check(path + " (weights)", focal::model::LoadLlamaWeights(*config, *store, nullptr).status());
    }
  }
  if (expect_tokenizer) Check(path + " (tokenizer)", focal::model::LoadTokenizer(*g).status());
}

void GgufSeeds() {
  {  // Byte-level BPE ("gpt2", SmolLM pre-tokenizer), F32 weights.
    Gguf g;
    const std::vector<std::string> tokens = {
        "<|endoftext|>", "h", "e", "l", "o", "Ġ", "w", "r", "d", "he", "ll", "Ġw", "hell", "hello"};
    LlamaModel(g, 4, 8, tokens.size(), false);
    g.Str("tokenizer.ggml.model", "gpt2");
    g.Str("tokenizer.ggml.pre", "smollm");
    g.StrArray("tokenizer.ggml.tokens", tokens);
    std::vector<int32_t> types(tokens.size(), 1);
    types[0] = 3;
    g.I32Array("tokenizer.ggml.token_type", types);
    g.StrArray("tokenizer.ggml.merges", {"h e", "l l", "Ġ w", "he ll", "hell o"});
    g.U32("tokenizer.ggml.bos_token_id", 0);
    g.U32("tokenizer.ggml.eos_token_id", 0);
    CheckGguf(Write("gguf", "bpe_f32.gguf", g.Build()), true);
  }
  {  // SentencePiece vocabulary ("llama"), Q8_0 embedding, constant focal.
    Gguf g;
    std::vector<std::string> tokens = {"<unk>",
                                       "<s>",
                                       "</s>",
                                       "\xe2\x96\x81",
                                       "a",
                                       "b",
                                       "\xe2\x96\x81"
                                       "a",
                                       "ab",
                                       "<0x0A>",
                                       "<0x20>"};
    LlamaModel(g, 32, 32, tokens.size(), true);
    g.Str("focal_attention.mode", "constant");
    g.F32("focal_attention.temperature", 0.5f);
    g.Str("tokenizer.ggml.model", "llama");
    g.StrArray("tokenizer.ggml.tokens", tokens);
    g.F32Array("tokenizer.ggml.scores", {0, 0, 0, -1, -2, -3, -4, -5, 0, 0});
    g.I32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1, 1, 1, 6, 6});
    g.U32("tokenizer.ggml.bos_token_id", 1);
    g.U32("tokenizer.ggml.eos_token_id", 2);
    g.U32("tokenizer.ggml.unknown_token_id", 0);
    g.Bool("tokenizer.ggml.add_bos_token", true);
    CheckGguf(Write("gguf", "spm_q8_focal.gguf", g.Build()), true);
  }
  {  // No tokenizer, learned focal keys, an output tensor (untied).
    Gguf g;
    LlamaModel(g, 4, 4, 6, false);
    g.U32("llama.vocab_size", 6);
    g.Str("focal_attention.mode", "learned");
    g.F32("focal_attention.tau_min", 0.1f);
    g.F32("focal_attention.tau_max", 2.0f);
    g.Str("focal_attention.reduction", "token");
    g.F32Tensor("blk.0.attn_focal_tau.weight", {4, 2});
    g.F32Tensor("blk.0.attn_focal_tau.bias", {2});
    g.F32Tensor("output.weight", {4, 6});
    const std::string bytes = g.Build();
    Write("gguf", "learned_untied.gguf", bytes);  // may be refused by shape: still a good seed
  }
}

// --- sentencepiece ModelProto (protobuf wire format) ------------------------------

std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  return s + static_cast<char>(v);
}
std::string Field(int field, const std::string& payload) {  // length-delimited
  return Varint(static_cast<uint64_t>(field) << 3 | 2) + Varint(payload.size()) + payload;
}
std::string VarintField(int field, uint64_t v) {
  return Varint(static_cast<uint64_t>(field) << 3) + Varint(v);
}
std::string Piece(const std::string& piece, float score, int type) {
  std::string s = Field(1, piece);
  s += Varint(2 << 3 | 5) + Le(score);
  s += VarintField(3, type);
  return Field(1, s);
}

void SentencePieceSeeds() {
  // type: 1 normal, 2 unknown, 3 control, 6 byte.
  auto model = [](int model_type, bool bytes, bool remove_extra_ws) {
    std::string m = Piece("<unk>", 0, 2) + Piece("<s>", 0, 3) + Piece("</s>", 0, 3);
    int n = 3;
    if (bytes) {
      for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof(name), "<0x%02X>", b);
        m += Piece(name, 0, 6);
        ++n;
      }
    }
    const char* normal[] = {"\xe2\x96\x81",
                            "a",
                            "b",
                            "c",
                            "\xe2\x96\x81"
                            "a",
                            "ab",
                            "bc",
                            "\xe2\x96\x81"
                            "ab",
                            "abc"};
    float score = -1;
    for (const char* p : normal) {
      m += Piece(p, score, 1);
      score -= 1;
      ++n;
    }
    std::string trainer = VarintField(3, model_type) + VarintField(4, n) +
                          VarintField(35, bytes ? 1 : 0) + VarintField(40, 0) + VarintField(41, 1) +
                          VarintField(42, 2) + VarintField(43, static_cast<uint64_t>(int64_t{-1}));
    std::string normalizer = Field(1, "identity") + VarintField(3, 1) +
                             VarintField(4, remove_extra_ws ? 1 : 0) + VarintField(5, 1);
    return m + Field(2, trainer) + Field(3, normalizer);
  };
  const struct {
    const char* name;
    int type;
    bool bytes, ws;
  } kSeeds[] = {{"bpe_bytes.model", 2, true, true}, {"unigram.model", 1, false, false}};
  for (const auto& s : kSeeds) {
    const std::string path = Write("sentencepiece", s.name, model(s.type, s.bytes, s.ws));
    const fs::path dir =
        fs::temp_directory_path() / ("focal-fuzz-seeds-" + std::to_string(getpid()));
    fs::create_directories(dir);
    fs::copy_file(path, dir / "tokenizer.model", fs::copy_options::overwrite_existing);
    Check(path, focal::model::LoadTokenizer(dir.string()).status());
    fs::remove_all(dir);
  }
}

// --- results files -------------------------------------------------------------------

void ResultsSeeds() {
  using namespace focal::reports;
  auto shard = [](int index, int count, int first_doc) {
    RunResults r;
    RunConfig* c = r.mutable_config();
    c->add_tasks("arc_easy");
    c->add_tasks("lambada_openai");
    c->set_shard_index(index);
    c->set_shard_count(count);
    c->set_seed(1234);
    c->set_harness_version("fuzz");
    ModelRun* m = r.add_models();
    m->set_model_path("models/base");
    m->set_weights_sha256("00aa");
    m->set_variant("base");
    m->set_bos_policy("bos");
    m->set_max_length(512);
    m->set_wall_seconds(1.5);
    m->set_tokens_processed(100);
    TaskResult* t = m->add_tasks();
    t->set_task("arc_easy");
    t->set_version(1);
    t->set_data_sha256("11bb");
    for (const char* name : {"acc", "acc_norm"}) {
      MetricValue* v = t->add_metrics();
      v->set_name(name);
      v->set_value(0.5);
      v->set_stderr(0.1);
      v->set_n(2);
      v->set_higher_is_better(true);
    }
    for (int d = 0; d < 2; ++d) {
      DocValues* dv = t->add_docs();
      dv->set_doc_index(first_doc + d);
      dv->add_values(d);
      dv->add_values(1 - d);
    }
    t->set_num_docs(2);
    t->set_num_requests(8);
    TaskResult* l = m->add_tasks();
    l->set_task("lambada_openai");
    l->set_data_sha256("22cc");
    for (const char* name : {"acc", "perplexity"}) {
      MetricValue* v = l->add_metrics();
      v->set_name(name);
      v->set_n(1);
      v->set_higher_is_better(std::string(name) == "acc");
    }
    DocValues* dv = l->add_docs();
    dv->set_doc_index(first_doc);
    dv->add_values(1);
    dv->add_values(-2.5);
    l->set_num_docs(1);
    l->set_num_requests(1);
    return r;
  };
  const std::string sep = "\n%%FILE%%\n";  // tests/fuzz/fuzz_util.h kFileSeparator
  RunResults a = shard(0, 2, 0), b = shard(1, 2, 2);
  Check("results shards", MergeShards({a, b}).status());
  std::string ja = *ResultsToJson(a), jb = *ResultsToJson(b);
  Write("results", "two_shards.json", ja + sep + jb);
  Write("results", "one_run.json", ja);
  // Two models in one run (report's columns).
  RunResults two = shard(0, 1, 0);
  *two.add_models() = two.models(0);
  two.mutable_models(1)->set_variant("focal(t=0.4)");
  Write("results", "two_models.json", *ResultsToJson(two));
}

// --- resume logs, safetensors ---------------------------------------------------------

void ResumeLogSeeds() {
  Write("resume_log", "scores.jsonl",
        "{\"k\":\"3f2a\",\"ll\":-1.25,\"g\":true}\n{\"k\":\"77b0\",\"ll\":-0.5,\"g\":false}\n"
        "{\"k\":\"torn\",\"ll\":-3");
  Write("resume_log", "generations.jsonl",
        "{\"k\":\"a1\",\"text\":\"Paris\",\"finish\":\"stop\"}\n"
        "{\"k\":\"b2\",\"text\":\"\",\"finish\":\"length\"}\n");
}

std::string SafetensorsFileBytes(const std::string& header, size_t data_bytes) {
  return Le<uint64_t>(header.size()) + header + std::string(data_bytes, '\x02');
}

void SafetensorsSeeds() {
  // Raw layout (fuzz_safetensors: odd first byte, then the file).
  const std::string h =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"I64","shape":[],"data_offsets":[8,16]},"c":{"dtype":"BOOL","shape":[0],"data_offsets":[16,16]}})";
  const std::string raw = SafetensorsFileBytes(h, 16);
  const std::string path = Write("safetensors", "raw_small", "\x01" + raw);
  const std::string check = (fs::path(out_dir) / "safetensors" / "check.safetensors").string();
  std::ofstream(check, std::ios::binary) << raw;
  Check(check, focal::model::SafetensorsFile::Open(check).status());
  fs::remove(check);
  // The index matching fuzz_safetensors_index's two shards.
  Write(
      "safetensors_index", "matching.index.json",
      R"({"metadata":{"total_size":88},"weight_map":{"lm_head.weight":"model-00002-of-00002.safetensors",)"
      R"("model.embed_tokens.weight":"model-00001-of-00002.safetensors",)"
      R"("model.norm.weight":"model-00001-of-00002.safetensors"}})");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seeds OUT_DIR\n";
    return 2;
  }
  out_dir = argv[1];
  GgufSeeds();
  SentencePieceSeeds();
  ResultsSeeds();
  ResumeLogSeeds();
  SafetensorsSeeds();
  return failures == 0 ? 0 : 1;
}
