#pragma once
// The translate example's training history: the whole run's figures, kept in the
// checkpoint's metadata (to_json) so that after --resume the pictures and totals cover
// every step, not only this process's.
#include <attograd/error.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace translate {

struct History {
  std::vector<double> step, loss;                    // every training step (label-smoothed loss)
  std::vector<double> val_step, val_loss, val_bleu;  // every evaluation (plain cross-entropy)
  double seconds = 0;                                // training wall time of every process so far
  int64_t tokens = 0;                                // target tokens trained on so far
  std::vector<double> process_seconds;               // the training time of each process, in order

  std::string to_json() const {
    return nlohmann::json{
        {"step", step},         {"loss", loss},       {"val_step", val_step}, {"val_loss", val_loss},
        {"val_bleu", val_bleu}, {"seconds", seconds}, {"tokens", tokens},     {"process_seconds", process_seconds}}
        .dump();
  }

  // ag::ValueError naming what is wrong when `text` is not to_json's.
  static History from_json(const std::string& text) {
    History h;
    try {
      const auto j = nlohmann::json::parse(text);
      j.at("step").get_to(h.step), j.at("loss").get_to(h.loss), j.at("val_step").get_to(h.val_step);
      j.at("val_loss").get_to(h.val_loss), j.at("val_bleu").get_to(h.val_bleu), j.at("seconds").get_to(h.seconds);
      j.at("tokens").get_to(h.tokens), j.at("process_seconds").get_to(h.process_seconds);
    } catch (const nlohmann::json::exception& e) {
      AG_CHECK(false, ValueError, "translate: the checkpoint's training history is not readable: ", e.what());
    }
    AG_CHECK(h.step.size() == h.loss.size() && h.val_step.size() == h.val_loss.size() &&
                 h.val_step.size() == h.val_bleu.size(),
             ValueError, "translate: the checkpoint's training history has ", h.step.size(), " steps and ",
             h.loss.size(), " losses, ", h.val_step.size(), " evaluations, ", h.val_loss.size(),
             " validation losses and ", h.val_bleu.size(), " BLEU scores");
    return h;
  }
};

}  // namespace translate
