// lm: trains a character-level GPT (or an LSTM or GRU) on the license texts Debian
// ships, reports the held-out loss (nats and bits per character) and samples text from
// a prompt.
//
//   build/examples/lm                                  # defaults: LLaMA-style, 600 steps, ~3.5 min at 12700 tokens/s
//   build/examples/lm --steps 300 --out runs/lm-quick --prompt "The license"
//   build/examples/lm --out runs/lm --resume --steps 0 --prompt "You may" --top-k 10
//   build/examples/lm --norm layer --pos learned --mlp gelu --dropout 0   # GPT-2-style
//   build/examples/lm --kv-heads 2 --tie                   # grouped-query attention, tied head
//   build/examples/lm --checkpoint-activations             # recompute blocks in backward: less memory
//   build/examples/lm --arch lstm --out runs/lm-lstm       # a 2-layer LSTM of about the same size (--arch gru)
//
// Writes to --out: metrics.json, loss.png (training and held-out loss), model.safetensors
// (the state dict with PyTorch names), eval.safetensors (a held-out batch and our logits,
// for tools/check_lm_model.py) and checkpoint.safetensors (resumable with --resume).
#include <CLI/CLI.hpp>
#include <attograd/log.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/plot.h"
#include "common/provenance.h"
#include "lm/sample.h"
#include "lm/trainer.h"

using namespace lm;
namespace fs = std::filesystem;
namespace plot = examples::plot;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int main(int argc, char** argv) {
  std::string command = argv[0];  // for metrics.json: the run that wrote it
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  Config c;
  SamplingOptions so;
  std::vector<std::string> data = default_text_files();
  std::string out = "runs/lm", prompt = "The ";
  int threads = 2;
  int64_t eval_every = 100, checkpoint_every = 200, max_new_tokens = 400;
  uint64_t sample_seed = 1;
  bool resume = false, no_cache = false;
  std::string arch = "transformer", norm = "rms", pos = "rope", mlp = "swiglu", precision = "f32", quantize = "none";
  int64_t layers = 0;  // 0: the architecture's default
  CLI::App app{"Train a character-level GPT (or an LSTM or GRU) on English text and sample from it."};
  app.option_defaults()->always_capture_default();
  app.footer("Example: attograd-lm --steps 300 --out runs/lm-quick --prompt \"The license\" --top-k 10");
  app.add_option("--data", data, "text files (default: Debian's /usr/share/common-licenses texts)")
      ->check(CLI::ExistingFile)
      ->default_str("the 14 license texts in /usr/share/common-licenses");
  app.add_option("--out", out, "output folder");
  app.add_option("--arch", arch,
                 "model: transformer (decoder-only), or lstm / gru (embedding, 2 recurrent layers, Linear head)")
      ->check(CLI::IsMember({"transformer", "lstm", "gru"}));
  app.add_option("--embed", c.embed, "lstm, gru: character embedding width")->check(CLI::PositiveNumber);
  app.add_option("--hidden", c.hidden, "lstm, gru: hidden width")
      ->check(CLI::PositiveNumber)
      ->default_str("248 (lstm), 288 (gru): about the Transformer's parameter count");
  app.add_option("--context", c.context, "context length (characters)")->check(CLI::PositiveNumber);
  app.add_option("--d-model", c.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--heads", c.heads, "attention heads")->check(CLI::PositiveNumber);
  app.add_option("--kv-heads", c.kv_heads, "key/value heads shared by the query heads (grouped-query attention)")
      ->check(CLI::PositiveNumber)
      ->default_str("heads");
  app.add_option("--norm", norm, "normalization: layer (LayerNorm) or rms (RMSNorm)")
      ->check(CLI::IsMember({"layer", "rms"}));
  app.add_option("--pos", pos, "positions: learned (embedding table) or rope (rotary, on q and k)")
      ->check(CLI::IsMember({"learned", "rope"}));
  app.add_option("--mlp", mlp, "feed-forward: gelu (4E wide) or swiglu (8E/3 wide, 3 matrices)")
      ->check(CLI::IsMember({"gelu", "swiglu"}));
  app.add_flag("--tie", c.tie, "tie the output head to the token embedding (default: separate)");
  app.add_flag("--checkpoint-activations", c.checkpoint_activations,
               "recompute each block's activations in backward instead of keeping them (less memory, more time)");
  app.add_option("--precision", precision,
                 "f32, or bf16 / f16 mixed precision: the forward under ag::autocast, f32 master weights; f16 "
                 "scales the loss with amp::GradScaler")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  app.add_option("--quantize", quantize,
                 "after training: quantize the Linear layers (ag::quant::quantize_, nn/QUANTIZATION.md), then "
                 "evaluate and generate again: int8 or int4 (weight-only, groups of 32), or dynamic-int8 (int8 "
                 "weights and activations quantized per row at run time)")
      ->check(CLI::IsMember({"none", "int8", "int4", "dynamic-int8"}));
  app.add_option("--layers", layers, "Transformer blocks, or recurrent layers")
      ->check(CLI::PositiveNumber)
      ->default_str("4 (transformer), 2 (lstm, gru)");
  app.add_option("--dropout", c.dropout, "dropout probability (lstm, gru: between the recurrent layers)")
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--batch", c.batch, "windows per micro-batch")->check(CLI::PositiveNumber);
  app.add_option("--accum", c.accum, "micro-batches accumulated per optimizer step")->check(CLI::PositiveNumber);
  app.add_option("--steps", c.steps, "optimizer steps in all (a resumed run continues up to it)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--warmup", c.warmup, "linear warm-up steps")->check(CLI::NonNegativeNumber);
  app.add_option("--lr", c.lr, "peak learning rate (cosine decay to lr/10)")->check(CLI::PositiveNumber);
  app.add_option("--weight-decay", c.weight_decay,
                 "AdamW decoupled weight decay (weight matrices of Linear and recurrent layers only)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--clip", c.clip, "global gradient-norm clip")->check(CLI::PositiveNumber);
  app.add_option("--seed", c.seed, "seed for initialization and training windows");
  app.add_option("--threads", threads, "threads for OpenBLAS and attograd")->check(CLI::PositiveNumber);
  app.add_option("--eval-every", eval_every, "steps between held-out evaluations (0: at the end only)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint-every", checkpoint_every, "steps between checkpoints (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--resume", resume, "continue from <out>/checkpoint.safetensors");
  app.add_option("--prompt", prompt, "text that generation starts from");
  app.add_option("--max-new-tokens", max_new_tokens, "characters to generate (0: none)")->check(CLI::NonNegativeNumber);
  app.add_option("--temperature", so.temperature, "sampling temperature (0: greedy)")->check(CLI::NonNegativeNumber);
  app.add_option("--top-k", so.top_k, "sample among the k most likely characters (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--top-p", so.top_p, "nucleus sampling: smallest set with this probability (1: all)")
      ->check(CLI::Range(1e-9, 1.0));
  app.add_option("--sample-seed", sample_seed, "seed for sampling");
  app.add_flag("--no-cache", no_cache,
               "generate by recomputing the last context tokens each step (no KV cache; lstm, gru: the whole text, "
               "no carried state)");
  CLI11_PARSE(app, argc, argv);
  c.arch = arch_from_name(arch);
  const bool recurrent = c.arch != Arch::transformer;
  for (const char* o : {"--d-model", "--heads", "--kv-heads", "--norm", "--pos", "--mlp", "--tie",
                        "--checkpoint-activations", "--quantize"})
    if (recurrent && app.count(o) > 0) {
      std::cerr << "lm: " << o << " is an option of --arch transformer, not " << arch << "\n";
      return 2;
    }
  for (const char* o : {"--embed", "--hidden"})
    if (!recurrent && app.count(o) > 0) {
      std::cerr << "lm: " << o << " is an option of --arch lstm and gru\n";
      return 2;
    }
  if (layers > 0) (recurrent ? c.rnn_layers : c.layers) = layers;
  c.norm = norm == "rms" ? Norm::rms : Norm::layer;
  c.pos = pos == "rope" ? Position::rope : Position::learned;
  c.mlp = mlp == "swiglu" ? MlpKind::swiglu : MlpKind::gelu;
  c.precision = examples::precision_from_name(precision);
  if (c.kv_heads > 0 && c.heads % c.kv_heads != 0) {
    std::cerr << "lm: --kv-heads " << c.kv_heads << " must divide --heads " << c.heads << "\n";
    return 2;
  }
  if (c.pos == Position::rope && (c.d_model / c.heads) % 2 != 0) {
    std::cerr << "lm: --pos rope needs an even head dim (--d-model / --heads), got " << c.d_model / c.heads << "\n";
    return 2;
  }
  if (c.d_model % c.heads != 0) {
    std::cerr << "lm: --d-model " << c.d_model << " must be divisible by --heads " << c.heads << "\n";
    return 2;
  }
  if (prompt.empty() && max_new_tokens > 0) {
    std::cerr << "lm: --prompt must not be empty\n";
    return 2;
  }

  try {
    set_num_threads(threads);
    fs::create_directories(out);
    const std::string ckpt = out + "/checkpoint.safetensors";
    Corpus corpus = make_corpus(read_texts(data), 0.1, c.context + 1);
    const int64_t V = corpus.vocab.size();
    const std::vector<Batch> val = sequential_windows(corpus.val, c.batch, c.context);
    const double bigram = bigram_loss(corpus.train, corpus.val, V, c.context);
    Run run(c, V);
    if (resume) {
      Metadata extra = load_checkpoint(ckpt, *run.model, &run.opt, &run.sched);
      restore_checkpoint_extra(run, extra);
      log().info("resumed from {} at step {}", ckpt, run.sched.last_step());
    }
    const std::string model_text =
        recurrent
            ? fmt::format("{}: embedding {}, hidden {}, {} layers", arch, c.embed, run.rnn()->hidden(), c.rnn_layers)
            : fmt::format("d_model {}, {} heads ({} kv), {} layers, norm {}, pos {}, mlp {}{}", c.d_model, c.heads,
                          c.kv_heads > 0 ? c.kv_heads : c.heads, c.layers, norm, pos, mlp, c.tie ? ", tied head" : "");
    log().info(
        "{} training + {} held-out characters, vocabulary {}; {} parameters; context {}, {}, batch {} x {} "
        "accumulated, {} steps, precision {}",
        corpus.train.size(), corpus.val.size(), V, run.model->num_parameters(), c.context, model_text, c.batch, c.accum,
        c.steps, precision);
    log().info("held-out bigram baseline: {:.4f} nats/char", bigram);

    // ---- training ----
    const bool tty = isatty(STDERR_FILENO);
    plot::Series train_curve{"train (smoothed)", {}, {}, {31, 119, 180}}, val_curve{"held-out", {}, {}, {214, 39, 40}};
    const auto t0 = Clock::now();
    double eval_secs = 0, smooth = 0, last_val = NAN;
    int64_t tokens = 0, skipped = 0;
    const int64_t first = run.sched.last_step();
    auto eval_now = [&](int64_t step) {
      auto te = Clock::now();
      last_val = evaluate(run.model, val, c.precision);
      eval_secs += seconds_since(te);
      val_curve.xs.push_back(static_cast<double>(step));
      val_curve.ys.push_back(last_val);
    };
    auto val_text = [&] { return std::isnan(last_val) ? std::string("-") : plot::fmt(last_val, 3); };
    while (run.sched.last_step() < c.steps) {
      StepStats s = train_step(run, corpus.train);
      tokens += s.tokens;
      skipped += s.skipped;
      smooth = s.step == first + 1 ? s.loss : 0.95 * smooth + 0.05 * s.loss;
      train_curve.xs.push_back(static_cast<double>(s.step));
      train_curve.ys.push_back(smooth);
      if ((eval_every > 0 && s.step % eval_every == 0) || s.step == c.steps) eval_now(s.step);
      const double train_secs = seconds_since(t0) - eval_secs;
      const double tps = static_cast<double>(tokens) / std::max(train_secs, 1e-9);
      const double eta =
          seconds_since(t0) / static_cast<double>(s.step - first) * static_cast<double>(c.steps - s.step);
      if (tty) {
        std::fprintf(stderr, "\rstep %5lld/%lld  loss %.3f  held-out %s  lr %.2e  %6.0f tok/s  ETA %4.0fs ",
                     static_cast<long long>(s.step), static_cast<long long>(c.steps), smooth, val_text().c_str(), s.lr,
                     tps, eta);
        if (s.step == c.steps) std::fprintf(stderr, "\n");
      } else if (s.step % 50 == 0 || s.step == c.steps) {
        log().info("step {}/{} loss {:.4f} held-out {} lr {:.2e} |g| {:.2f} {:.0f} tok/s ETA {:.0f}s", s.step, c.steps,
                   smooth, val_text(), s.lr, s.grad_norm, tps, eta);
      }
      if (checkpoint_every > 0 && (s.step % checkpoint_every == 0 || s.step == c.steps))
        save_checkpoint(ckpt, *run.model, &run.opt, &run.sched, checkpoint_extra(run));
    }
    const double train_secs = seconds_since(t0) - eval_secs;
    const double train_tps = static_cast<double>(tokens) / std::max(train_secs, 1e-9);
    if (std::isnan(last_val)) eval_now(run.sched.last_step());  // nothing trained in this run
    const double val_loss = last_val, bpc = val_loss / std::log(2.0);

    // ---- generation ----
    Generator sample_gen(sample_seed);
    std::string sample;
    double gen_tps = 0;
    if (max_new_tokens > 0) {
      auto tg = Clock::now();
      sample = corpus.vocab.decode(
          generate(run.model, corpus.vocab.encode(prompt), max_new_tokens, so, sample_gen, !no_cache));
      gen_tps = static_cast<double>(max_new_tokens) / std::max(seconds_since(tg), 1e-9);
    }

    std::cout << "\nheld-out loss " << plot::fmt(val_loss, 4) << " nats/char = " << plot::fmt(bpc, 4)
              << " bits/char (bigram baseline " << plot::fmt(bigram, 4)
              << " nats/char = " << plot::fmt(bigram / std::log(2.0), 4) << " bits/char)\n"
              << "training: " << run.sched.last_step() << " steps, " << plot::fmt(train_secs, 1) << " s in this run, "
              << plot::fmt(train_tps, 0) << " tokens/s, precision " << precision;
    if (c.precision == DType::f16)
      std::cout << " (" << skipped << " steps skipped by the GradScaler, loss scale " << run.scaler.get_scale() << ")";
    std::cout << "\n";
    std::string decoding = recurrent ? "carried recurrent state" : "KV cache";
    if (no_cache)
      decoding = recurrent ? "full recomputation of the whole text"
                           : "full recomputation over the last " + std::to_string(c.context);
    if (max_new_tokens > 0)
      std::cout << "generation: " << max_new_tokens << " characters at " << plot::fmt(gen_tps, 1) << " tokens/s ("
                << decoding << ")\n\n"
                << prompt << sample << "\n\n";

    // ---- files ----
    nn::save(*run.model, out + "/model.safetensors");
    {  // a held-out batch and our logits, for tools/check_lm_model.py
      NoGradGuard no_grad;
      run.model->eval();
      Tensor x = val.front().x.narrow(0, 0, std::min<int64_t>(4, val.front().x.size(0)));
      TensorMap eval_set;
      eval_set.insert("x", x);
      eval_set.insert("logits", run.model(x));
      Metadata sizes{{"arch", arch}, {"vocab", std::to_string(V)}, {"context", std::to_string(c.context)}};
      if (recurrent)
        sizes.insert({{"embed", std::to_string(c.embed)},
                      {"hidden", std::to_string(run.rnn()->hidden())},
                      {"layers", std::to_string(c.rnn_layers)}});
      else
        sizes.insert({{"d_model", std::to_string(c.d_model)},
                      {"heads", std::to_string(c.heads)},
                      {"layers", std::to_string(c.layers)},
                      {"kv_heads", std::to_string(c.kv_heads > 0 ? c.kv_heads : c.heads)},
                      {"norm", norm},
                      {"pos", pos},
                      {"mlp", mlp},
                      {"tie", c.tie ? "1" : "0"}});
      save_safetensors(out + "/eval.safetensors", eval_set, sizes);
    }
    nlohmann::json metrics = {{"val_loss_nats", val_loss},
                              {"val_bits_per_char", bpc},
                              {"bigram_val_loss_nats", bigram},
                              {"bigram_val_bits_per_char", bigram / std::log(2.0)},
                              {"final_train_loss_smoothed", smooth},
                              {"steps", run.sched.last_step()},
                              {"train_seconds", train_secs},
                              {"eval_seconds", eval_secs},
                              {"train_tokens_per_s", train_tps},
                              {"generate_tokens_per_s", gen_tps},
                              {"generate_kv_cache", !no_cache},
                              {"precision", precision},
                              {"grad_scaler_skipped_steps", skipped},
                              {"parameters", run.model->num_parameters()},
                              {"vocab", V},
                              {"train_chars", corpus.train.size()},
                              {"val_chars", corpus.val.size()},
                              {"data", data},
                              {"command", command},
                              {"provenance", examples::provenance(command)},
                              {"eval_curve", {{"steps", val_curve.xs}, {"loss", val_curve.ys}}},
                              {"sample",
                               {{"prompt", prompt},
                                {"text", sample},
                                {"temperature", so.temperature},
                                {"top_k", so.top_k},
                                {"top_p", so.top_p},
                                {"seed", sample_seed}}},
                              {"config",
                               {{"arch", arch},
                                {"context", c.context},
                                {"precision", precision},
                                {"dropout", c.dropout},
                                {"batch", c.batch},
                                {"accum", c.accum},
                                {"warmup", c.warmup},
                                {"lr", c.lr},
                                {"weight_decay", c.weight_decay},
                                {"clip", c.clip},
                                {"seed", c.seed},
                                {"threads", threads}}}};
    nlohmann::json& config = metrics["config"];
    if (recurrent) {
      config.update({{"embed", c.embed}, {"hidden", run.rnn()->hidden()}, {"layers", c.rnn_layers}});
    } else {
      config.update({{"d_model", c.d_model},
                     {"heads", c.heads},
                     {"kv_heads", c.kv_heads > 0 ? c.kv_heads : c.heads},
                     {"layers", c.layers},
                     {"norm", norm},
                     {"pos", pos},
                     {"mlp", mlp},
                     {"tie", c.tie},
                     {"checkpoint_activations", c.checkpoint_activations}});
    }
    std::ofstream(out + "/metrics.json") << metrics.dump(2) << "\n";
    // The picture last: a drawing failure (it throws) leaves the model and metrics written.
    if (!train_curve.xs.empty() || !val_curve.xs.empty())
      plot::line_chart(out + "/loss.png", "Character LM loss", {train_curve, val_curve}, "step", "loss (nats/char)");
    std::cout << "  picture: " << out << "/loss.png\n  model:   " << out
              << "/model.safetensors (metrics.json, eval.safetensors beside it)\n";
    if (quantize != "none") {
      // Quantization of the trained model: the same held-out windows and the
      // same prompt and sampling seed, against the f32 figures above.
      GPT gpt = run.gpt();
      const int64_t done = quantize_for_inference(gpt, quantize);
      const double q_val = evaluate(run.model, val, c.precision);
      double q_tps = 0;
      if (max_new_tokens > 0) {
        Generator q_gen(sample_seed);
        auto tg = Clock::now();
        generate(run.model, corpus.vocab.encode(prompt), max_new_tokens, so, q_gen, !no_cache);
        q_tps = static_cast<double>(max_new_tokens) / std::max(seconds_since(tg), 1e-9);
      }
      std::cout << "\n"
                << quantize << " weights (" << done << " Linear layers quantized): held-out loss "
                << plot::fmt(q_val, 4) << " nats/char (f32 " << plot::fmt(val_loss, 4) << ", "
                << (q_val >= val_loss ? "+" : "") << plot::fmt(q_val - val_loss, 4) << ")";
      if (max_new_tokens > 0)
        std::cout << ", generation " << plot::fmt(q_tps, 1) << " tokens/s (f32 " << plot::fmt(gen_tps, 1) << ")";
      std::cout << "\n";
      metrics["quantized"] = {
          {"format", quantize}, {"layers_quantized", done}, {"val_loss_nats", q_val}, {"generate_tokens_per_s", q_tps}};
      std::ofstream(out + "/metrics.json") << metrics.dump(2) << "\n";
      nn::save(*run.model, out + "/model-" + quantize + ".safetensors");
      std::cout << "  quantized model: " << out << "/model-" << quantize << ".safetensors\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "lm: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
