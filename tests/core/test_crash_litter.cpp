// No litter after a crash: a save killed mid-write leaves `<name>.tmp.<pid>.<n>`, and the
// next save to the same path removes it, but never a live process's temporary nor a file
// that does not match the pattern exactly.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using ag::Shape;
using ag::Tensor;

namespace {

std::string tmp_dir(const std::string& name) { return test_util::tmp_dir("crash_litter", name); }

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string temp_prefix(const std::string& file, pid_t pid) { return file + ".tmp." + std::to_string(pid) + "."; }

// The temporaries of `pid` for `file` in dir.
std::vector<std::string> temporaries(const std::string& dir, const std::string& file, pid_t pid) {
  std::vector<std::string> out;
  for (const std::string& n : files_in(dir))
    if (n.rfind(temp_prefix(file, pid), 0) == 0) out.push_back(n);
  return out;
}

void touch(const std::string& path) { test_util::write_bytes(path, "partial"); }

// A process that exists until stop() (or ~LiveChild) kills and reaps it.
struct LiveChild {
  pid_t pid = ::fork();
  LiveChild() {
    if (pid == 0)
      for (;;) ::pause();
  }
  ~LiveChild() { stop(); }
  void stop() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  }
};

// The pid of a process that has exited and been reaped. (A new process could reuse it,
// but Linux hands out pids in increasing order and wraps only after pid_max.)
pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace

TEST_CASE("a save killed mid-write leaves a temporary that the next save removes") {
  const std::string dir = tmp_dir("sigkill"), file = "ckpt.safetensors", path = dir + "/" + file;
  // 48 MB, large enough that a save takes a while and the kill lands mid-write.
  ag::TensorMap big, small;
  big.insert("w", ag::full(Shape{12 << 20}, 0.25, ag::DType::f32));
  small.insert("w", Tensor::from_vector(std::vector<float>{1, 2, 3}));
  const uint64_t big_bytes = 12u << 22;

  pid_t killed = -1;
  std::vector<std::string> left;
  for (int attempt = 0; attempt < 5 && left.empty(); ++attempt) {
    CAPTURE(attempt);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // saves in a loop until killed; no doctest here
      for (;;) {
        try {
          ag::save_safetensors(path, big);
        } catch (...) { ::_exit(3); }
      }
    }
    // Wait until the child's temporary exists (and, mostly, holds part of the data), then
    // kill it: in open, write or fsync, the temporary stays behind.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool seen = false;
    int polls_partial = 0;
    while (!seen && std::chrono::steady_clock::now() < deadline) {
      for (const std::string& n : temporaries(dir, file, child)) {
        struct stat st {};
        if (::stat((dir + "/" + n).c_str(), &st) != 0) continue;
        // Prefer a kill mid-write; after 50 polls of an empty file take what there is.
        seen = (st.st_size > 0 && uint64_t(st.st_size) < big_bytes) || ++polls_partial > 50;
      }
      if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::kill(child, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFSIGNALED(status));  // not an exit: the child's saves did not fail
    REQUIRE(seen);
    killed = child;
    left = temporaries(dir, file, child);  // empty if the kill landed just after a rename
  }
  REQUIRE(left.size() == 1);
  MESSAGE("killed pid ", killed, " left ", left[0], " (", fs::file_size(dir + "/" + left[0]), " bytes)");

  // Litter of the same kind that must stay: a live process's temporary, near-misses of
  // the pattern, another file's temporary, and a directory with a matching name.
  LiveChild live;
  REQUIRE(live.pid > 0);
  const pid_t dead = dead_pid();
  const std::string d = std::to_string(dead);
  const std::vector<std::string> kept = {
      temp_prefix(file, live.pid) + "17",  // live process
      file + ".tmp." + d,                  // no counter
      file + ".tmp." + d + ".",            // empty counter
      file + ".tmp." + d + ".12x",         // counter not a number
      file + ".tmp." + d + ".1.bak",       // something after the counter
      file + ".tmp.0" + d + ".1",          // pid with a leading zero
      file + ".tmp.-" + d + ".1",          // signed pid
      file + ".tmp.0.1",                   // pid 0 (kill(0, 0) is the process group)
      "x" + file + ".tmp." + d + ".1",     // another file's name
      "other.safetensors.tmp." + d + ".1",
  };
  for (const std::string& n : kept) touch(dir + "/" + n);
  const std::string dead_temp = temp_prefix(file, dead) + "4242", dead_dir = temp_prefix(file, dead) + "99";
  touch(dir + "/" + dead_temp);
  fs::create_directory(dir + "/" + dead_dir);

  ag::save_safetensors(path, small);
  std::vector<std::string> want = kept;
  want.push_back(file);
  want.push_back(dead_dir);
  std::sort(want.begin(), want.end());
  CHECK(files_in(dir) == want);  // the killed child's and the dead pid's temporaries are gone
  CHECK(ag::load_safetensors(path).at("w").to_vector<float>() == std::vector<float>{1, 2, 3});

  // Once the live process is gone its temporary is stale too.
  const std::string live_temp = temp_prefix(file, live.pid) + "17";
  live.stop();
  ag::save_safetensors(path, small);
  want.erase(std::find(want.begin(), want.end(), live_temp));
  CHECK(files_in(dir) == want);
}

TEST_CASE("a save in the current directory cleans up there too") {
  const std::string dir = tmp_dir("cwd");
  const fs::path old_cwd = fs::current_path();
  fs::current_path(dir);
  const std::string stale = temp_prefix("m.safetensors", dead_pid()) + "7";
  touch(stale);
  ag::TensorMap m;
  m.insert("x", ag::scalar_tensor(1.5));
  ag::save_safetensors("m.safetensors", m);
  const std::vector<std::string> got = files_in(".");
  fs::current_path(old_cwd);
  CHECK(got == std::vector<std::string>{"m.safetensors"});
}
