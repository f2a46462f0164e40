#pragma once
// The PLplot page every picture of plot.h draws on (plot.cpp, plot_images.cpp): one PNG
// at a time, under plplot_mutex(), since PLplot keeps global state (the current stream,
// the exit handler). Internal to the examples' plot library.
#include <attograd/error.h>
#include <plplot/plstream.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace examples::plot::detail {

inline constexpr const char* kDevice = "pngcairo";
inline constexpr int kInk = 1, kGrid = 2, kFirstSeries = 3;  // cmap0 indices (0 is the background)

inline std::mutex& plplot_mutex() {
  static std::mutex m;
  return m;
}

// PLplot calls exit() after a fatal error unless the handler does not return.
inline int throw_instead_of_exit(const char* message) { throw ag::Error(std::string("plot: PLplot: ") + message); }

// The pngcairo device is a plugin of its own package; without it plinit would ask for a
// device on stdin.
inline void check_device() {
  // plgDevs fills arrays of the caller's, of at most n entries.
  int n = 256;
  std::vector<const char*> menu(static_cast<std::size_t>(n)), names(static_cast<std::size_t>(n));
  const char** menu_p = menu.data();
  const char** names_p = names.data();
  try {
    plgDevs(&menu_p, &names_p, &n);  // exits (throws here) when it finds no driver at all
  } catch (const ag::Error& e) {
    AG_CHECK(false, Error, e.what(), " (apt-get install plplot-driver-cairo for the '", kDevice, "' device)");
  }
  bool found = false;
  for (int i = 0; i < n; ++i) found = found || std::strcmp(names[static_cast<std::size_t>(i)], kDevice) == 0;
  AG_CHECK(found, Error, "plot: PLplot has no '", kDevice,
           "' device: apt-get install plplot-driver-cairo (PLplot's cairo driver)");
}

// One PNG being drawn: a PLplot stream writing to path + ".tmp", renamed into place by
// finish(); the temporary file is removed if drawing fails.
class Page {
 public:
  Page(const std::string& path, int width, int height) : path_(path), tmp_(path + ".tmp") {
    plsexit(throw_instead_of_exit);  // global, and plgDevs may already exit
    check_device();
    // PLplot retries a file it cannot open ten times, then exits: find out first.
    std::FILE* f = std::fopen(tmp_.c_str(), "wb");
    AG_CHECK(f != nullptr, IOError, "plot: cannot write ", tmp_, ": ", std::strerror(errno));
    std::fclose(f);
    pls_ = std::make_unique<plstream>();
    pls_->sError(&errcode_, errmsg_);  // plabort's messages land here, not on stderr
    pls_->sdev(kDevice);
    pls_->sfnam(tmp_.c_str());
    pls_->spage(90, 90, width, height, 0, 0);
    pls_->scolbg(255, 255, 255);
    pls_->scol0(kInk, 40, 40, 40);
    pls_->scol0(kGrid, 225, 225, 225);
    pls_->sfont(PL_FCI_SANS, PL_FCI_UPRIGHT, PL_FCI_MEDIUM);
    pls_->init();
    pls_->adv(0);
    pls_->col0(kInk);
  }
  Page(const Page&) = delete;
  Page& operator=(const Page&) = delete;
  ~Page() {
    if (pls_) {
      pls_.reset();
      std::remove(tmp_.c_str());
    }
  }

  // Text `px` pixels high whatever the page size (PLplot's default scales with it):
  // plschr takes millimetres, and the page is 90 dpi.
  void text_px(double px) { pls_->schr(px * 25.4 / 90.0, 1.0); }

  plstream& operator*() { return *pls_; }
  plstream* operator->() { return pls_.get(); }

  // Ends the stream (the device writes the PNG then) and renames it into place.
  void finish() {
    pls_.reset();
    if (errcode_ != 0) {
      std::remove(tmp_.c_str());
      AG_CHECK(false, Error, "plot: PLplot failed drawing ", path_, ": ", errmsg_);
    }
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
      std::string why = std::strerror(errno);
      std::remove(tmp_.c_str());
      AG_CHECK(false, IOError, "plot: cannot rename ", tmp_, " to ", path_, ": ", why);
    }
  }

 private:
  std::string path_, tmp_;
  PLINT errcode_ = 0;
  char errmsg_[1024] = {};
  std::unique_ptr<plstream> pls_;
};

}  // namespace examples::plot::detail
