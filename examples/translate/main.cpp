// translate: trains the encoder-decoder Transformer to translate English software
// messages into French, from the gettext catalogs Debian installs (/usr/share/locale),
// and reports BLEU and chrF on a held-out test split.
//
//   build/examples/translate                        # defaults: 900 steps, 25-50 minutes on 2 cores
//   build/examples/translate --steps 100 --out runs/translate-quick
//   build/examples/translate --out runs/translate --translate "cannot open file %s"
//
// Writes to --out: subword.model (SentencePiece, trained on the training split),
// checkpoint.safetensors (--resume), model.safetensors, metrics.json, loss.png,
// bleu.png (validation BLEU over training), attention.png, samples.txt.
#include <CLI/CLI.hpp>
#include <attograd/log.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/plot.h"
#include "translate/catalog.h"
#include "translate/metrics.h"
#include "translate/report.h"
#include "translate/trainer.h"

using namespace translate;
namespace fs = std::filesystem;
namespace plot = examples::plot;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Subword ids of each pair; pairs longer than max_len pieces on either side are left out
// of training (kept, cut, for validation and test so that every reference is scored).
std::vector<TokenPair> encode(const Subword& sw, const std::vector<Pair>& pairs, int64_t max_len, bool drop_long) {
  std::vector<TokenPair> out;
  for (const Pair& p : pairs) {
    TokenPair t{sw.encode(p.source), sw.encode(p.target)};
    const bool long_pair = static_cast<int64_t>(t.src.size()) > max_len || static_cast<int64_t>(t.tgt.size()) > max_len;
    if (long_pair && drop_long) continue;
    t.src.resize(std::min<std::size_t>(t.src.size(), static_cast<std::size_t>(max_len)));
    t.tgt.resize(std::min<std::size_t>(t.tgt.size(), static_cast<std::size_t>(max_len)));
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> sides(const std::vector<Pair>& pairs, bool source) {
  std::vector<std::string> s;
  for (const Pair& p : pairs) s.push_back(source ? p.source : p.target);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  std::string lang = "fr", out = "runs/translate", line;
  int threads = 2;
  int64_t eval_every = 100, checkpoint_every = 100, val_bleu_sentences = 300, beam = 4;
  double alpha = 0.6;
  bool resume = false;
  CLI::App app{"Trains an English -> French Transformer on the machine's gettext catalogs"};
  app.option_defaults()->always_capture_default();
  app.footer("Example: attograd-translate --steps 200 --beam 1 --out runs/translate-200");
  app.add_option("--lang", lang, "target language: the catalogs under /usr/share/locale/<lang>");
  app.add_option("--out", out, "output folder");
  app.add_option("--steps", c.steps, "optimizer steps in all, --resume continues up to it (0: no step bound)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--minutes", c.minutes, "also stop after this many minutes of training (0: no time limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--vocab", c.vocab, "subword vocabulary size (SentencePiece unigram, joint)")
      ->check(CLI::Range(100, 64000));
  app.add_option("--d-model", c.d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--heads", c.heads, "attention heads")->check(CLI::PositiveNumber);
  app.add_option("--layers", c.layers, "encoder and decoder layers (each)")->check(CLI::PositiveNumber);
  app.add_option("--d-ff", c.d_ff, "feed-forward width")->check(CLI::PositiveNumber);
  app.add_option("--dropout", c.dropout, "dropout probability")->check(CLI::Range(0.0, 0.9));
  app.add_option("--label-smoothing", c.label_smoothing, "label smoothing")->check(CLI::Range(0.0, 0.9));
  app.add_option("--max-tokens", c.max_tokens, "padded tokens per micro-batch (length-bucketed)")
      ->check(CLI::PositiveNumber);
  app.add_option("--step-tokens", c.step_tokens, "target tokens accumulated per optimizer step")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", c.warmup, "Noam warm-up steps")->check(CLI::PositiveNumber);
  app.add_option("--lr-factor", c.lr_factor, "Noam factor")->check(CLI::PositiveNumber);
  app.add_option("--seed", c.seed, "seed");
  app.add_option("--threads", threads, "threads for OpenBLAS and attograd")->check(CLI::PositiveNumber);
  app.add_option("--eval-every", eval_every, "steps between validation loss and BLEU")->check(CLI::PositiveNumber);
  app.add_option("--checkpoint-every", checkpoint_every, "steps between checkpoints")->check(CLI::PositiveNumber);
  app.add_option("--beam", beam, "beam size for the test set (1: greedy only)")->check(CLI::PositiveNumber);
  app.add_option("--length-penalty", alpha, "GNMT length penalty alpha for beam search")->check(CLI::NonNegativeNumber);
  app.add_flag("--resume", resume, "continue from <out>/checkpoint.safetensors");
  app.add_option("--translate", line, "translate this English line with the model in --out, then exit");
  CLI11_PARSE(app, argc, argv);

  try {
    set_num_threads(threads);
    fs::create_directories(out);
    const std::string ckpt = out + "/checkpoint.safetensors", sw_path = out + "/subword.model";
    if (!line.empty()) {
      Subword sw = Subword::load(sw_path);
      Run run(c, sw.vocab_size());
      load_checkpoint(ckpt, *run.model);
      TokenPair p{sw.encode(line), {}};
      std::cout << translate_greedy(run.model, sw, {p}, c.max_len, c.max_tokens)[0] << "\n";
      return 0;
    }

    Corpus corpus = build_corpus(lang);
    const Splits& sp = corpus.splits;
    if (sp.train.empty()) {
      std::cerr << "translate: no English -> " << lang << " pairs: no catalogs found under /usr/share/locale/" << lang
                << "/LC_MESSAGES (tools/setup translate in attograd's source tree installs the packages "
                << "whose French catalogs make the default corpus)\n";
      return 1;
    }
    std::vector<std::string> sw_text = sides(sp.train, true), fr = sides(sp.train, false);
    sw_text.insert(sw_text.end(), fr.begin(), fr.end());
    auto t_sw = Clock::now();
    Subword sw = Subword::train_or_load(sw_text, SubwordOptions{c.vocab, "unigram", threads}, sw_path);
    log().info("subword vocabulary: {} pieces ({:.1f} s, {})", sw.vocab_size(), since(t_sw), sw_path);
    const auto train = encode(sw, sp.train, c.max_len, true), val = encode(sw, sp.validation, c.max_len, false),
               test = encode(sw, sp.test, c.max_len, false);
    log().info("pairs: {} train, {} validation, {} test (English -> {})", train.size(), val.size(), test.size(), lang);

    Run run(c, sw.vocab_size());
    History h;
    if (resume) {
      Metadata extra = load_checkpoint(ckpt, *run.model, &run.opt, &run.sched);
      run.epoch = std::stoll(extra.at("epoch")), run.cursor = std::stoll(extra.at("cursor"));
      // Checkpoints from before the history was kept have none: the totals start here.
      if (auto it = extra.find("history"); it != extra.end()) h = History::from_json(it->second);
      if (run.cursor > 0) run.batches = bucket_batches(train, c.max_tokens, c.seed, run.epoch);
      log().info("resumed from {} at step {}", ckpt, run.sched.last_step());
    }
    log().info("model: d_model {}, {} heads, {}+{} layers, d_ff {}, {} parameters; {} target tokens per step",
               c.d_model, c.heads, c.layers, c.layers, c.d_ff, run.model->num_parameters(), c.step_tokens);

    const std::vector<TokenPair> val_subset(val.begin(),
                                            val.begin() + std::min<std::ptrdiff_t>(val.size(), val_bleu_sentences));
    const std::vector<std::string> val_refs = [&] {
      auto r = sides(sp.validation, false);
      r.resize(val_subset.size());
      return r;
    }();
    auto t0 = Clock::now();
    int64_t tokens = 0;
    const int64_t first = run.sched.last_step();
    const double seconds_before = h.seconds;
    // --steps 0: no step bound; --minutes 0: no time limit; both 0: no training at all
    // (evaluate the checkpoint of --resume).
    auto done = [&] {
      return (c.steps > 0 && run.sched.last_step() >= c.steps) || (c.minutes > 0 && since(t0) >= c.minutes * 60) ||
             (c.steps == 0 && c.minutes == 0);
    };
    // The history as of now, for checkpoints and the report: this process's time added.
    auto history_now = [&] {
      History now = h;
      now.seconds = seconds_before + since(t0);
      now.process_seconds.push_back(since(t0));
      return now;
    };
    auto checkpoint = [&] {
      save_checkpoint(ckpt, *run.model, &run.opt, &run.sched,
                      {{"epoch", std::to_string(run.epoch)},
                       {"cursor", std::to_string(run.cursor)},
                       {"history", history_now().to_json()}});
    };
    while (!done()) {
      StepStats s = train_step(run, train);
      tokens += s.tokens, h.tokens += s.tokens;
      h.step.push_back(static_cast<double>(s.step)), h.loss.push_back(s.loss);
      const double secs = since(t0);
      double left = c.steps > 0 ? secs / static_cast<double>(s.step - first) * static_cast<double>(c.steps - s.step)
                                : c.minutes * 60 - secs;
      if (c.minutes > 0) left = std::min(left, c.minutes * 60 - secs);
      if (s.step % 25 == 0)
        log().info("step {} loss {:.3f} lr {:.2e} |g| {:.2f} {:.0f} tok/s ETA {:.0f}s epoch {}", s.step, s.loss, s.lr,
                   s.grad_norm, static_cast<double>(tokens) / secs, std::max(0.0, left), run.epoch);
      if (s.step % eval_every == 0) {
        const double vl = evaluate_loss(run.model, val, c.max_tokens);
        const double vb =
            corpus_bleu_single(translate_greedy(run.model, sw, val_subset, c.max_len, c.max_tokens), val_refs).score;
        h.val_step.push_back(static_cast<double>(s.step)), h.val_loss.push_back(vl), h.val_bleu.push_back(vb);
        log().info("step {} validation loss {:.3f}, BLEU {:.2f} (greedy, {} sentences)", s.step, vl, vb,
                   val_subset.size());
      }
      if (s.step % checkpoint_every == 0) checkpoint();
    }
    checkpoint();
    h = history_now();
    log().info("trained {} steps in this process ({:.1f} minutes); {} steps in {:.1f} minutes in all",
               run.sched.last_step() - first, since(t0) / 60, run.sched.last_step(), h.seconds / 60);
    nn::save(*run.model, out + "/model.safetensors");
    ReportOptions ro;
    ro.beam = beam, ro.length_penalty = alpha, ro.lang = lang, ro.corpus = &corpus, ro.threads = threads;
    ro.validation.assign(sp.validation.begin(), sp.validation.begin() + static_cast<std::ptrdiff_t>(val_subset.size()));
    for (int i = 0; i < argc; ++i) ro.command += (i ? " " : "") + std::string(i ? argv[i] : "translate");
    report(out, run, sw, sp.test, test, h, ro);
  } catch (const std::exception& e) {
    std::cerr << "translate: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
