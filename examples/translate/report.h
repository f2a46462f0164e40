#pragma once
// The translate example's results: test-set BLEU and chrF for greedy decoding, beam
// search and a copy-the-source baseline, samples, pictures and metrics.json.
#include <string>
#include <vector>

#include "catalog.h"
#include "history.h"
#include "trainer.h"

namespace translate {

struct ReportOptions {
  int64_t beam = 4;
  double length_penalty = 0.6;
  std::string lang = "fr";
  const Corpus* corpus = nullptr;  // the training split (translation memory), split figures
  // The validation sentences the BLEU curve is measured on: the baselines are drawn
  // beside it on the same sentences.
  std::vector<Pair> validation;
  std::string command;  // the command line, recorded in metrics.json
  int threads = 0;
};

// Scores the test split (greedy, beam, and the copy-the-source and translation-memory
// baselines), prints the table and samples, and writes to `out`: metrics.json,
// samples.txt, loss.png, bleu.png, attention.png. Training totals come from `h`.
void report(const std::string& out, Run& run, const Subword& sw, const std::vector<Pair>& test_text,
            const std::vector<TokenPair>& test, const History& h, const ReportOptions& o);

}  // namespace translate
