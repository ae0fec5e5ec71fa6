// ww_vectors: golden vectors shared by the C++ and TS frame codecs (protocol/vectors/).
//   ww_vectors write  DIR   writes cpp-*.bin (the frames of golden_frames.hpp)
//   ww_vectors verify DIR   checks the committed cpp-*.bin equal what the encoder writes now
//   ww_vectors check  DIR   decodes every ts-*.bin and re-encodes it to the same bytes; checks that
//                           every invalid-<CODE>-*.bin is rejected by decodeFrame with that CODE
// Exit code 0 when all is well, 1 on a mismatch (each printed on stderr), 2 on bad usage.
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "golden_frames.hpp"
#include "warpwatch/frame.hpp"

namespace {

bool readFile(const std::string& path, std::vector<std::uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

std::vector<std::string> listDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) names.emplace_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int write(const std::string& dir) {
  for (const auto& [name, bytes] : warpwatch::golden::vectorFiles()) {
    std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::cerr << "cannot write " << dir << "/" << name << "\n";
      return 1;
    }
    std::cout << "wrote " << name << " (" << bytes.size() << " bytes)\n";
  }
  return 0;
}

int verify(const std::string& dir) {
  int failures = 0;
  for (const auto& [name, expected] : warpwatch::golden::vectorFiles()) {
    std::vector<std::uint8_t> actual;
    if (!readFile(dir + "/" + name, actual)) {
      std::cerr << name << ": missing (run ww_vectors write " << dir << ")\n";
      ++failures;
    } else if (actual != expected) {
      std::cerr << name << ": committed bytes differ from what the encoder writes now (run ww_vectors write " << dir << ")\n";
      ++failures;
    }
  }
  if (failures == 0) std::cout << "cpp vectors current\n";
  return failures == 0 ? 0 : 1;
}

int check(const std::string& dir) {
  int failures = 0;
  int valid = 0;
  int invalid = 0;
  for (const std::string& name : listDir(dir)) {
    if (!endsWith(name, ".bin")) continue;
    std::vector<std::uint8_t> bytes;
    if (!readFile(dir + "/" + name, bytes)) {
      std::cerr << name << ": cannot read\n";
      ++failures;
      continue;
    }
    if (startsWith(name, "ts-") || startsWith(name, "cpp-")) {
      try {
        const std::vector<warpwatch::Frame> frames = warpwatch::decodeFrames(bytes.data(), bytes.size());
        std::vector<std::uint8_t> again;
        for (const warpwatch::Frame& f : frames) std::visit([&again](const auto& x) { warpwatch::appendFrame(again, x); }, f);
        if (frames.empty() || again != bytes) {
          std::cerr << name << ": decode + re-encode gives different bytes (" << frames.size() << " frames)\n";
          ++failures;
        }
        ++valid;
      } catch (const warpwatch::FrameError& e) {
        std::cerr << name << ": " << e.what() << "\n";
        ++failures;
      }
    } else if (startsWith(name, "invalid-")) {
      const std::size_t end = name.find('-', 8);
      const std::string expected = name.substr(8, end == std::string::npos ? std::string::npos : end - 8);
      try {
        (void)warpwatch::decodeFrame(bytes.data(), bytes.size());
        std::cerr << name << ": decoded, expected " << expected << "\n";
        ++failures;
      } catch (const warpwatch::FrameError& e) {
        if (expected != e.codeName()) {
          std::cerr << name << ": got " << e.what() << ", expected " << expected << "\n";
          ++failures;
        }
      }
      ++invalid;
    }
  }
  std::cout << "checked " << valid << " valid and " << invalid << " invalid vector files, " << failures << " failures\n";
  if (valid == 0) {
    std::cerr << "no vectors found in " << dir << "\n";
    return 1;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: ww_vectors write|verify|check DIR\n";
    return 2;
  }
  const std::string command = argv[1];
  const std::string dir = argv[2];
  if (command == "write") return write(dir);
  if (command == "verify") return verify(dir);
  if (command == "check") return check(dir);
  std::cerr << "ww_vectors: command must be write, verify or check, got '" << command << "'\n";
  return 2;
}
