// copy_task: trains the encoder-decoder Transformer on the copy task (or reverse /
// sort), evaluates greedy decoding on held-out sequences and draws what it learned.
//
//   build/examples/copy_task                   # defaults: under 90 s on 2 cores
//   build/examples/copy_task --task reverse --min-len 5 --out runs/reverse
//   build/examples/copy_task --preset annotated  # d_model 512, as The Annotated Transformer
//   tools/mpirun -np 2 build/examples/copy_task --ddp   # data parallel: each rank half of each batch
//   tools/mpirun -np 2 build/examples/copy_task --tp 2  # tensor parallel: each rank half of the heads
//
// Writes to --out: metrics.json, loss.png, attention.png, model.safetensors (the state
// dict, loadable in PyTorch), eval.safetensors (held-out sources and our decodes, for
// tools/check_copy_model.py) and checkpoint.safetensors (resumable with --resume).
#include <CLI/CLI.hpp>
#include <attograd/log.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/cross_attention.h"
#include "common/provenance.h"
#include "copy/plot.h"
#include "copy/trainer.h"

using namespace copy_task;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string task_name(Task t) { return t == Task::copy ? "copy" : t == Task::reverse ? "reverse" : "sort"; }

std::string row_text(const std::vector<int64_t>& v, int64_t i, int64_t n) {
  std::string s;
  for (int64_t t = 0; t < n; ++t) {
    int64_t x = v[i * n + t];
    if (x == 0) break;
    s += (s.empty() ? "" : " ") + std::to_string(x);
  }
  return s;
}

void draw_attention(const std::string& path, Seq2Seq& model, const Batch& b, const std::string& task) {
  NoGradGuard no_grad;
  model->eval();
  Tensor src = b.src.narrow(0, 0, 1), tgt_in = b.tgt_in.narrow(0, 0, 1);
  auto maps = examples::cross_attention_maps(*model->transformer->decoder, model->embed(model->tgt_embed, tgt_in),
                                             model->encode(src), ne(src, 0));  // each (h, T, S)
  const int64_t T = maps[0].size(1), S = maps[0].size(2);
  auto s = src.to_vector<int64_t>(), o = b.tgt_out.narrow(0, 0, 1).to_vector<int64_t>();
  std::vector<std::string> rows, cols;
  for (int64_t t = 0; t < T; ++t) rows.push_back(std::to_string(o[t]));
  for (int64_t j = 0; j < S; ++j) cols.push_back(s[j] == 1 ? "<s>" : std::to_string(s[j]));
  examples::draw_cross_attention(path, "Cross-attention per head (" + task + " task)", maps, rows, cols);
}

}  // namespace

int main(int argc, char** argv) {
  dist::InitGuard world(&argc, &argv);  // a world of one without mpirun
  std::string command = argv[0];        // for metrics.json: the run that wrote it
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  Config c;
  std::string task = "copy", out = "runs/copy", preset, precision = "f32";
  int threads = 1;
  int64_t checkpoint_every = 200;
  bool resume = false, ddp = false;
  int tp = 1;
  int64_t fail_at_step = 0;
  CLI::App app{"Train a Transformer on the copy task and evaluate greedy decoding."};
  app.option_defaults()->always_capture_default();
  app.footer("Example: attograd-copy-task --task reverse --steps 500 --out runs/reverse");
  app.add_option("--task", task, "copy, reverse or sort")->check(CLI::IsMember({"copy", "reverse", "sort"}));
  app.add_option("--d-model", c.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--heads", c.heads, "attention heads")->check(CLI::PositiveNumber);
  app.add_option("--layers", c.layers, "encoder and decoder layers (each)")->check(CLI::PositiveNumber);
  app.add_option("--d-ff", c.d_ff, "feed-forward width")->check(CLI::PositiveNumber);
  app.add_option("--dropout", c.dropout, "dropout probability")->check(CLI::Range(0.0, 0.99));
  app.add_option("--batch", c.batch, "sequences per step")->check(CLI::PositiveNumber);
  app.add_option("--steps", c.steps, "optimizer steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", c.warmup, "Noam warm-up steps")->check(CLI::PositiveNumber);
  app.add_option("--lr-factor", c.lr_factor, "Noam factor")->check(CLI::PositiveNumber);
  app.add_option("--label-smoothing", c.label_smoothing, "cross-entropy label smoothing")->check(CLI::Range(0.0, 1.0));
  app.add_option("--seq-len", c.len, "sequence length including the start token")->check(CLI::Range(3, 60));
  app.add_option("--min-len", c.min_len, "shortest sequence (padding below --seq-len)")->check(CLI::Range(2, 60));
  app.add_option("--seed", c.seed, "random seed");
  app.add_option("--precision", precision,
                 "f32, or bf16 / f16 mixed precision: training and decoding under ag::autocast, f32 master weights; "
                 "f16 scales the loss with amp::GradScaler (not with --tp)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  app.add_option("--threads", threads, "threads for OpenBLAS and attograd")->check(CLI::PositiveNumber);
  app.add_option("--eval", c.eval, "held-out sequences to decode")->check(CLI::PositiveNumber);
  app.add_option("--checkpoint-every", checkpoint_every, "steps between checkpoints (0: none)");
  app.add_option("--out", out, "output folder");
  app.add_flag("--resume", resume, "continue from <out>/checkpoint.safetensors");
  app.add_flag("--ddp", ddp, "data parallel over the mpirun ranks (nn::DistributedDataParallel)");
  app.add_option("--fail-at-step", fail_at_step,
                 "fault test: the last rank throws after this step "
                 "(the job must end, naming it, and --resume must continue from the last checkpoint)");
  app.add_option("--tp", tp,
                 "tensor parallel: split every layer's heads and feed-forward over this many ranks "
                 "(all of mpirun's)")
      ->check(CLI::PositiveNumber);
  app.add_option("--preset", preset, "annotated: d_model 512, d_ff 2048, 8 heads, 400 steps")
      ->check(CLI::IsMember({"annotated"}));
  CLI11_PARSE(app, argc, argv);
  if (preset == "annotated") {
    c.d_model = 512, c.d_ff = 2048, c.heads = 8, c.layers = 2, c.batch = 80, c.steps = 400, c.warmup = 400;
    c.lr_factor = 1.0;
  }
  c.task = parse_task(task);
  c.precision = examples::precision_from_name(precision);
  c.min_len = std::min(c.min_len, c.len);
  if (c.d_model % c.heads != 0) {
    std::cerr << "copy_task: --d-model " << c.d_model << " must be divisible by --heads " << c.heads << "\n";
    return 2;
  }

  if (tp > 1 && (ddp || tp != dist::world_size())) {
    std::cerr << "copy_task: --tp " << tp << " needs exactly " << tp << " ranks (mpirun -np " << tp
              << ") and no --ddp; this run has " << dist::world_size() << "\n";
    return 2;
  }
  c.tensor_parallel = tp > 1;

  try {
    set_num_threads(threads);
    const bool lead = dist::rank() == 0;  // rank 0 logs, evaluates and writes files
    if (!lead) log().set_level(spdlog::level::warn);
    if (lead) fs::create_directories(out);
    // Tensor-parallel ranks hold different slices (and optimizer moments): one
    // checkpoint per rank, resumed with the same --tp. Otherwise rank 0 writes for all.
    const std::string ckpt = out + (c.tensor_parallel ? "/checkpoint.rank" + std::to_string(dist::rank()) + "-of-" +
                                                            std::to_string(tp) + ".safetensors"
                                                      : "/checkpoint.safetensors");
    const bool writes_checkpoint = lead || c.tensor_parallel;
    Run run(c, ddp);
    if (ddp)
      log().info("data parallel: {} ranks, {} sequences each per step", dist::world_size(),
                 c.batch / dist::world_size());
    if (c.tensor_parallel)
      log().info("tensor parallel: {} ranks, {} of {} heads and {} of {} feed-forward units each", tp, c.heads / tp,
                 c.heads, c.d_ff / tp, c.d_ff);
    std::vector<double> loss_x, loss_y;
    if (resume) {
      Metadata extra = load_checkpoint(ckpt, *run.model, &run.opt, &run.sched);
      const auto gen = extra.find("data_gen");  // .at() would leak std::out_of_range
      AG_CHECK(gen != extra.end(), ValueError, "--resume: ", ckpt, " has no 'data_gen' metadata entry");
      run.data_gen.set_state(gen->second);
      examples::load_scaler_state(run.scaler, extra);  // f16: the loss scale continues
      log().info("resumed from {} at step {}", ckpt, run.sched.last_step());
    }
    log().info(
        "{} task: d_model {}, {} heads, {}+{} layers, d_ff {}, batch {}, {} steps, {} parameters, precision {}",
        task_name(c.task), c.d_model, c.heads, c.layers, c.layers, c.d_ff, c.batch, c.steps,
        [&] {
          int64_t n = 0;
          for (auto& p : run.model->parameters()) n += p.numel();
          return n;
        }(),
        precision);

    const bool tty = isatty(STDERR_FILENO);
    auto t0 = Clock::now();
    int64_t tokens = 0, skipped = 0, first = run.sched.last_step();
    double smooth = 0;
    while (run.sched.last_step() < c.steps) {
      StepStats s = train_step(run);
      tokens += s.tokens;
      skipped += s.skipped;
      smooth = s.step == first + 1 ? s.loss : 0.9 * smooth + 0.1 * s.loss;
      loss_x.push_back(static_cast<double>(s.step));
      loss_y.push_back(s.loss);
      double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      double tps = tokens / std::max(secs, 1e-9);
      double eta = secs / static_cast<double>(s.step - first) * static_cast<double>(c.steps - s.step);
      if (tty && lead) {
        std::fprintf(stderr, "\rstep %5lld/%lld  loss %.4f  lr %.2e  %6.0f tok/s  ETA %4.0fs ",
                     static_cast<long long>(s.step), static_cast<long long>(c.steps), smooth, s.lr, tps, eta);
        if (s.step == c.steps) std::fprintf(stderr, "\n");
      } else if (s.step % 50 == 0 || s.step == c.steps) {
        log().info("step {}/{} loss {:.4f} lr {:.2e} {:.0f} tok/s ETA {:.0f}s", s.step, c.steps, smooth, s.lr, tps,
                   eta);
      }
      if (checkpoint_every > 0 && (s.step % checkpoint_every == 0 || s.step == c.steps)) {
        if (writes_checkpoint) {
          Metadata extra{{"data_gen", run.data_gen.state()}};
          examples::save_scaler_state(run.scaler, extra);
          save_checkpoint(ckpt, *run.model, &run.opt, &run.sched, extra);
        }
        dist::barrier();
      }
      if (s.step == fail_at_step && dist::rank() == dist::world_size() - 1)
        throw std::runtime_error("failing on purpose after step " + std::to_string(s.step) + " (--fail-at-step)");
    }
    double train_secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (c.tensor_parallel) {
      // Gather the slices into the single-process model (a collective); rank 0 evaluates
      // it with the KV cache and saves it, loadable by one process and by PyTorch.
      TensorMap full = nn::full_state_dict(*run.model);
      if (!lead) return 0;
      Config one = c;
      one.tensor_parallel = false;
      Seq2Seq whole = make_model(one);
      whole->load_state_dict(full);
      run.model = whole;
      log().info("gathered the {} ranks' slices into one model", tp);
    }
    if (!lead) return 0;  // the ranks hold one model: rank 0 evaluates it

    auto te = Clock::now();
    EvalResult ev = evaluate(run.model, c, c.eval);
    double eval_secs = std::chrono::duration<double>(Clock::now() - te).count();
    std::cout << "\n"
              << task_name(c.task) << " task, " << c.eval << " held-out sequences (greedy decoding, KV cache):\n"
              << "  exact-sequence accuracy " << plot::fmt(100 * ev.exact, 1) << "%\n"
              << "  per-token accuracy      " << plot::fmt(100 * ev.token, 2) << "%\n"
              << "  training " << plot::fmt(train_secs, 1) << " s, evaluation " << plot::fmt(eval_secs, 1)
              << " s, precision " << precision;
    if (c.precision == DType::f16)
      std::cout << " (" << skipped << " steps skipped by the GradScaler, loss scale " << run.scaler.get_scale() << ")";
    std::cout << "\n\n";
    auto src = ev.batch.src.to_vector<int64_t>(), want = ev.batch.tgt_out.to_vector<int64_t>(),
         got = ev.decoded.to_vector<int64_t>();
    for (int64_t i = 0; i < 4; ++i)
      std::cout << "  source  " << row_text(src, i, c.len) << "\n  decoded 1 " << row_text(got, i, c.len - 1)
                << (row_text(got, i, c.len - 1) == row_text(want, i, c.len - 1) ? "   (correct)" : "   (WRONG)")
                << "\n";

    nn::save(*run.model, out + "/model.safetensors");
    // The held-out set and our decodes, for tools/check_copy_model.py to compare with PyTorch.
    TensorMap eval_set;
    eval_set.insert("src", ev.batch.src);
    eval_set.insert("target", ev.batch.tgt_out);
    eval_set.insert("decoded", ev.decoded);
    save_safetensors(out + "/eval.safetensors", eval_set,
                     {{"d_model", std::to_string(c.d_model)},
                      {"heads", std::to_string(c.heads)},
                      {"layers", std::to_string(c.layers)},
                      {"d_ff", std::to_string(c.d_ff)},
                      {"vocab", std::to_string(c.vocab)}});
    nlohmann::json metrics = {{"task", task_name(c.task)},
                              {"exact_sequence_accuracy", ev.exact},
                              {"token_accuracy", ev.token},
                              {"eval_sequences", c.eval},
                              {"steps", c.steps},
                              {"train_seconds", train_secs},
                              {"eval_seconds", eval_secs},
                              {"parallel", ddp                 ? "ddp"
                                           : c.tensor_parallel ? "tp"
                                                               : "none"},
                              {"world_size", dist::world_size()},
                              {"command", command},
                              {"provenance", examples::provenance(command)},
                              {"final_loss", loss_y.empty() ? 0.0 : loss_y.back()},
                              {"precision", precision},
                              {"grad_scaler_skipped_steps", skipped},
                              {"config",
                               {{"d_model", c.d_model},
                                {"heads", c.heads},
                                {"layers", c.layers},
                                {"d_ff", c.d_ff},
                                {"dropout", c.dropout},
                                {"batch", c.batch},
                                {"warmup", c.warmup},
                                {"lr_factor", c.lr_factor},
                                {"seq_len", c.len},
                                {"min_len", c.min_len},
                                {"seed", c.seed},
                                {"threads", threads}}}};
    std::ofstream(out + "/metrics.json") << metrics.dump(2) << "\n";
    // Pictures last: a drawing failure (it throws) leaves the model and metrics written.
    if (!loss_x.empty())
      plot::line_chart(out + "/loss.png", "Training loss (" + task_name(c.task) + " task)", loss_x, loss_y, "step",
                       "loss (nats/token)");
    draw_attention(out + "/attention.png", run.model, ev.batch, task_name(c.task));
    std::cout << "\n  pictures: " << out << "/loss.png, " << out << "/attention.png\n"
              << "  model:    " << out << "/model.safetensors (metrics.json beside it)\n";
  } catch (const std::exception& e) {
    if (dist::world_size() > 1) dist::abort(std::string("copy_task: ") + e.what());  // ends every rank
    std::cerr << "copy_task: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
