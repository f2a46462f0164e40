#pragma once
// Where a results file came from, so anyone can re-derive its figures: the attograd
// commit (and whether the tree had changes), the command line, the machine and the
// date, and show_config() (the engines that ran). Every example's metrics.json carries
// it under "provenance" (issue 43).
#include <attograd/attograd.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

namespace examples {

// /proc/cpuinfo's model name, or "unknown".
inline std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) return line.substr(line.find(':') + 2);
  return "unknown";
}

// The time now in UTC, ISO 8601 ("2026-11-29T10:02:03Z").
inline std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The first line `cmd` prints, without its newline; "" when it fails.
inline std::string first_line_of(const std::string& cmd) {
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  char buf[256] = {};
  const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
  const int status = pclose(p);
  std::string s = got && status == 0 ? buf : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// The source tree's commit ("3f915b5", "+dirty" when tracked files changed), or
// "unknown (not a git checkout)": the tree the example was built from.
inline std::string source_commit() {
  const std::string dir = AG_EXAMPLES_SOURCE_DIR;
  const std::string commit = first_line_of("git -C '" + dir + "' rev-parse --short HEAD 2>/dev/null");
  if (commit.empty()) return "unknown (not a git checkout)";
  const std::string dirty =
      first_line_of("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null | head -n 1");
  return commit + (dirty.empty() ? "" : "+dirty");
}

// {attograd_commit, attograd_version, command, cpu, cores, date, config}.
inline nlohmann::json provenance(const std::string& command) {
  return {{"attograd_commit", source_commit()},
          {"attograd_version", std::string(ag::version)},
          {"command", command},
          {"cpu", cpu_name()},
          {"cores", std::thread::hardware_concurrency()},
          {"date", utc_now()},
          {"config", ag::show_config()}};
}

}  // namespace examples
