// warpwatch frame format, version 1 — header-only C++17, no CUDA required.
// The byte layout is specified in protocol/SPEC.md; the TypeScript codec in protocol/ reads and
// writes the same bytes (golden vectors in protocol/vectors/ are checked by both).
//
//   warpwatch::LaunchSummary summary;  ... fill ...
//   std::vector<std::uint8_t> bytes = warpwatch::encodeFrame(summary);   // throws FrameError
//   warpwatch::Frame frame = warpwatch::decodeFrame(bytes.data(), bytes.size());
//   if (auto* s = std::get_if<warpwatch::LaunchSummary>(&frame)) { ... }
//
// The constants, histogram bin functions and splitmix64 that the device probe also needs live in
// device-common.hpp (NVRTC-safe, __host__ __device__ under nvcc), which this header includes.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "device-common.hpp"  // kMaxGroupSize, histogram bins, splitmix64, Selection (NVRTC-safe)

namespace warpwatch {

// ---------------------------------------------------------------------------------------------
// Constants and limits (SPEC.md "Header", "Size bounds").

inline constexpr std::uint8_t kFrameMagic[4] = {0x57, 0x57, 0x46, 0x52};  // "WWFR"
inline constexpr std::uint16_t kFrameVersion = 1;
inline constexpr std::size_t kFrameHeaderBytes = 16;
inline constexpr std::uint32_t kMaxPayloadBytes = 4u * 1024u * 1024u;
inline constexpr std::size_t kMaxStringBytes = 255;
inline constexpr std::uint32_t kMaxHistogramEntries = kHistogramBinCount;
inline constexpr std::uint32_t kMaxGroupSamples = 4096;
inline constexpr std::uint64_t kMaxCount = (std::uint64_t{1} << 53) - 1;  // counts exact as JS numbers

enum class FrameType : std::uint16_t { LaunchSummary = 1, GroupSamples = 2 };
enum class Source : std::uint8_t { Cuda = 0, Cpu = 1 };
// Selection (GroupSamples `selection`) is in device-common.hpp.

// ---------------------------------------------------------------------------------------------
// Errors: the same codes as protocol/errors.ts.

enum class FrameErrorCode { Truncated, BadMagic, UnknownVersion, UnknownType, CrcMismatch, OverLimit, Invalid };

inline const char* frameErrorCodeName(FrameErrorCode code) noexcept {
  switch (code) {
    case FrameErrorCode::Truncated: return "WW_ERR_FRAME_TRUNCATED";
    case FrameErrorCode::BadMagic: return "WW_ERR_FRAME_BAD_MAGIC";
    case FrameErrorCode::UnknownVersion: return "WW_ERR_FRAME_UNKNOWN_VERSION";
    case FrameErrorCode::UnknownType: return "WW_ERR_FRAME_UNKNOWN_TYPE";
    case FrameErrorCode::CrcMismatch: return "WW_ERR_FRAME_CRC_MISMATCH";
    case FrameErrorCode::OverLimit: return "WW_ERR_FRAME_OVER_LIMIT";
    case FrameErrorCode::Invalid: return "WW_ERR_FRAME_INVALID";
  }
  return "WW_ERR_FRAME_INVALID";
}

class FrameError : public std::runtime_error {
 public:
  FrameError(FrameErrorCode code, const std::string& message)
      : std::runtime_error(std::string(frameErrorCodeName(code)) + ": " + message), code_(code) {}
  FrameErrorCode code() const noexcept { return code_; }
  const char* codeName() const noexcept { return frameErrorCodeName(code_); }

 private:
  FrameErrorCode code_;
};

// ---------------------------------------------------------------------------------------------
// Frame structs (SPEC.md "Payload").

struct DeviceInfo {
  std::string name;                      // 0..255 bytes UTF-8
  std::array<std::uint8_t, 16> uuid{};   // raw bytes, zeros when unknown
  std::uint8_t computeCapabilityMajor = 0;
  std::uint8_t computeCapabilityMinor = 0;
  std::uint64_t clockHz = 1000000000;    // tick rate of all clocks: SM clock (cuda) or 1e9 (cpu, ns)
};

struct FrameIdentity {
  std::string job;                // 1..255 bytes, no '/'
  std::string kernel;             // 1..255 bytes
  std::uint64_t launchId = 0;
  std::uint32_t frameSequence = 0;
  Source source = Source::Cpu;
  std::uint8_t groupSize = 32;    // 1..32
  bool sync = true;
  DeviceInfo device;
  std::uint64_t startUnixNanos = 0;
  std::uint64_t endUnixNanos = 0;
};

struct HistogramEntry {
  std::uint32_t bin = 0;    // < kHistogramBinCount, strictly increasing within a frame
  std::uint64_t count = 0;  // 1..kMaxCount
};

struct LaunchSummary {
  FrameIdentity identity;
  std::uint64_t groupCount = 0;
  std::uint64_t groupsCounted = 0;  // <= groupCount
  std::uint64_t sumSimtClocks = 0;  // Σ n·(c_end − c0)
  std::uint64_t sumMimdClocks = 0;  // Σ Σ_i (c_i − c0)
  double sumMeasuredLoss = 0;       // Σ C_SIMT/C_MIMD per group
  double sumCountsLoss = 0;         // Σ n·max(w)/Σw per group
  std::uint64_t sumMaxCounts = 0;
  std::uint64_t sumCounts = 0;
  std::uint64_t droppedSamples = 0;
  std::vector<HistogramEntry> histogram;  // Σ count == groupsCounted * groupSize
};

struct GroupSample {
  std::uint64_t groupIndex = 0;  // < groupCount
  std::uint64_t startClock = 0;
  std::uint64_t endClock = 0;
  std::vector<std::uint32_t> laneCounts;        // exactly groupSize entries
  std::vector<std::uint64_t> laneFinishClocks;  // exactly groupSize entries
};

struct GroupSamples {
  FrameIdentity identity;
  std::uint64_t groupCount = 0;
  Selection selection = Selection::Stride;
  std::uint16_t groupsPerBlock = 0;  // Block: 1..65535 groups per sampled block; other selections: 0
  std::uint32_t samplingStride = 1;  // >= 1
  std::vector<GroupSample> groups;   // <= kMaxGroupSamples
};

using Frame = std::variant<LaunchSummary, GroupSamples>;

struct FrameHeader {
  std::uint16_t version = 0;
  std::uint16_t type = 0;
  std::uint32_t payloadLength = 0;
  std::uint32_t payloadCrc32c = 0;
};

// ---------------------------------------------------------------------------------------------
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), table driven.

namespace detail {
struct Crc32cTable {
  std::uint32_t entries[256];
  constexpr Crc32cTable() : entries{} {
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : (c >> 1);
      entries[i] = c;
    }
  }
};
inline constexpr Crc32cTable kCrc32cTable{};
}  // namespace detail

/// CRC-32C of `size` bytes; pass a previous result as `crc` to continue a running checksum.
inline std::uint32_t crc32c(const std::uint8_t* data, std::size_t size, std::uint32_t crc = 0) noexcept {
  std::uint32_t c = ~crc;
  for (std::size_t i = 0; i < size; ++i) c = detail::kCrc32cTable.entries[(c ^ data[i]) & 0xFFu] ^ (c >> 8);
  return ~c;
}

// Histogram bins (histogramBinOf, histogramBinLow/High/Representative) and splitmix64 are in
// device-common.hpp (shared with the device probe and NVRTC).

// ---------------------------------------------------------------------------------------------
// Encoding.

namespace detail {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { le(v, 2); }
  void u32(std::uint32_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void f64(double v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    le(bits, 8);
  }
  void bytes(const std::uint8_t* p, std::size_t n) { out_.insert(out_.end(), p, p + n); }
  void str(const std::string& s) {
    u8(static_cast<std::uint8_t>(s.size()));
    bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  }

 private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t>& out_;
};

// Strict UTF-8 check (RFC 3629: no overlongs, no surrogates, <= U+10FFFF), same as TextDecoder fatal.
inline bool isValidUtf8(const std::uint8_t* s, std::size_t n) {
  std::size_t i = 0;
  while (i < n) {
    const std::uint8_t c = s[i];
    if (c < 0x80) { ++i; continue; }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return false;
    if (i + len > n) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

/// The identity rule of contracts/stream-identity.ts on a frame string's UTF-8 bytes, with the
/// messages of protocol/validate-frame.ts identityBytesProblem: no control character — C0
/// (0x00–0x1F), DEL (0x7F), C1 (U+0080–U+009F: 0xC2 0x80–0x9F) — and no backslash right before
/// ',', '=', a space or the end (InfluxDB 1.8 cannot store it in a tag; docs/estimator.md
/// "Tags"). Throws FrameError (Invalid); the byte offset counts from 1.
inline void checkIdentityCharacters(const std::string& s, const char* field) {
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto byte = static_cast<std::uint8_t>(s[i]);
    int control = -1;
    if (byte < 0x20 || byte == 0x7F) {
      control = byte;
    } else if (byte == 0xC2 && i + 1 < n && static_cast<std::uint8_t>(s[i + 1]) <= 0x9F) {
      control = static_cast<std::uint8_t>(s[i + 1]);  // a continuation byte is >= 0x80
    } else if (byte == '\\' && (i + 1 == n || s[i + 1] == ',' || s[i + 1] == '=' || s[i + 1] == ' ')) {
      throw FrameError(FrameErrorCode::Invalid, std::string(field) + " must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at byte " +
                                                    std::to_string(i + 1));
    }
    if (control >= 0) {
      char code[8];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(control));
      throw FrameError(FrameErrorCode::Invalid, std::string(field) + " must not contain control characters (" + code + " at byte " + std::to_string(i + 1) + ")");
    }
  }
}

inline void checkString(const std::string& s, const char* field, std::size_t minBytes, bool forbidSlash) {
  if (s.size() > kMaxStringBytes)
    throw FrameError(FrameErrorCode::OverLimit, std::string(field) + " must be at most 255 UTF-8 bytes, got " + std::to_string(s.size()));
  if (s.size() < minBytes)
    throw FrameError(FrameErrorCode::Invalid, std::string(field) + " must not be empty");
  if (!isValidUtf8(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()))
    throw FrameError(FrameErrorCode::Invalid, std::string(field) + " is not valid UTF-8");
  if (forbidSlash && s.find('/') != std::string::npos)
    throw FrameError(FrameErrorCode::Invalid, std::string(field) + " must not contain '/', got '" + s + "'");
  checkIdentityCharacters(s, field);
}

inline void checkCount(std::uint64_t v, const char* field) {
  if (v > kMaxCount)
    throw FrameError(FrameErrorCode::OverLimit, std::string(field) + " must be at most 2^53-1, got " + std::to_string(v));
}

inline void checkLossSum(double v, const char* field) {
  if (!std::isfinite(v) || v < 0)
    throw FrameError(FrameErrorCode::Invalid, std::string(field) + " must be finite and >= 0");
}

inline void checkIdentity(const FrameIdentity& id) {
  checkString(id.job, "job", 1, true);
  checkString(id.kernel, "kernel", 1, false);
  checkString(id.device.name, "device name", 0, false);
  if (id.groupSize == 0) throw FrameError(FrameErrorCode::Invalid, "groupSize must be 1..32, got 0");
  if (id.groupSize > kMaxGroupSize)
    throw FrameError(FrameErrorCode::OverLimit, "groupSize must be 1..32, got " + std::to_string(id.groupSize));
  if (id.source != Source::Cuda && id.source != Source::Cpu)
    throw FrameError(FrameErrorCode::Invalid, "source must be 0 (cuda) or 1 (cpu)");
  if (id.device.clockHz == 0) throw FrameError(FrameErrorCode::Invalid, "clockHz must be >= 1, got 0");
  checkCount(id.device.clockHz, "clockHz");
}

inline void writeIdentity(ByteWriter& w, const FrameIdentity& id) {
  w.u64(id.launchId);
  w.u32(id.frameSequence);
  w.u8(static_cast<std::uint8_t>(id.source));
  w.u8(id.groupSize);
  w.u8(id.sync ? 1 : 0);
  w.u8(0);
  w.u64(id.startUnixNanos);
  w.u64(id.endUnixNanos);
  w.u64(id.device.clockHz);
  w.bytes(id.device.uuid.data(), 16);
  w.u8(id.device.computeCapabilityMajor);
  w.u8(id.device.computeCapabilityMinor);
  w.str(id.job);
  w.str(id.kernel);
  w.str(id.device.name);
}

inline void finishFrame(std::vector<std::uint8_t>& out, std::size_t frameStart, FrameType type) {
  const std::size_t payloadStart = frameStart + kFrameHeaderBytes;
  const std::size_t payloadLength = out.size() - payloadStart;
  if (payloadLength > kMaxPayloadBytes)
    throw FrameError(FrameErrorCode::OverLimit, "payload must be at most 4194304 bytes, got " + std::to_string(payloadLength));
  const std::uint32_t crc = crc32c(out.data() + payloadStart, payloadLength);
  std::uint8_t* h = out.data() + frameStart;
  std::memcpy(h, kFrameMagic, 4);
  const std::uint16_t version = kFrameVersion;
  const std::uint16_t t = static_cast<std::uint16_t>(type);
  const std::uint32_t len = static_cast<std::uint32_t>(payloadLength);
  for (int i = 0; i < 2; ++i) h[4 + i] = static_cast<std::uint8_t>(version >> (8 * i));
  for (int i = 0; i < 2; ++i) h[6 + i] = static_cast<std::uint8_t>(t >> (8 * i));
  for (int i = 0; i < 4; ++i) h[8 + i] = static_cast<std::uint8_t>(len >> (8 * i));
  for (int i = 0; i < 4; ++i) h[12 + i] = static_cast<std::uint8_t>(crc >> (8 * i));
}

}  // namespace detail

/// Checks everything the format requires of a LaunchSummary (limits, bins, histogram total).
/// Throws FrameError (OverLimit/Invalid). Encoder and decoder both call it.
inline void validateFrame(const LaunchSummary& f) {
    detail::checkIdentity(f.identity);
    detail::checkCount(f.groupCount, "groupCount");
    detail::checkCount(f.groupsCounted, "groupsCounted");
    if (f.groupsCounted > f.groupCount)
      throw FrameError(FrameErrorCode::Invalid, "groupsCounted (" + std::to_string(f.groupsCounted) +
                                                    ") must be <= groupCount (" + std::to_string(f.groupCount) + ")");
    detail::checkLossSum(f.sumMeasuredLoss, "sumMeasuredLoss");
    detail::checkLossSum(f.sumCountsLoss, "sumCountsLoss");
    detail::checkCount(f.sumMaxCounts, "sumMaxCounts");
    detail::checkCount(f.sumCounts, "sumCounts");
    detail::checkCount(f.droppedSamples, "droppedSamples");
    if (f.histogram.size() > kMaxHistogramEntries)
      throw FrameError(FrameErrorCode::OverLimit, "histogram entries must be at most 2432, got " + std::to_string(f.histogram.size()));
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < f.histogram.size(); ++i) {
      const HistogramEntry& e = f.histogram[i];
      if (e.bin >= kHistogramBinCount)
        throw FrameError(FrameErrorCode::Invalid, "histogram bin must be < 2432, got " + std::to_string(e.bin));
      if (i > 0 && e.bin <= f.histogram[i - 1].bin)
        throw FrameError(FrameErrorCode::Invalid, "histogram bins must be strictly increasing");
      if (e.count == 0) throw FrameError(FrameErrorCode::Invalid, "histogram counts must be >= 1");
      detail::checkCount(e.count, "histogram count");
      total += e.count;
      detail::checkCount(total, "histogram total");
    }
    const std::uint64_t lanes = f.groupsCounted * f.identity.groupSize;  // <= 2^58, no overflow
    if (total != lanes)
      throw FrameError(FrameErrorCode::Invalid, "histogram counts must sum to groupsCounted*groupSize (" +
                                                    std::to_string(lanes) + "), got " + std::to_string(total));
}

/// Appends one encoded LaunchSummary frame to `out`. Throws FrameError (OverLimit/Invalid) on a
/// frame the format cannot carry; `out` is restored to its previous size in that case.
inline void appendFrame(std::vector<std::uint8_t>& out, const LaunchSummary& f) {
  validateFrame(f);
  const std::size_t start = out.size();
  try {
    out.resize(start + kFrameHeaderBytes);
    detail::ByteWriter w(out);
    detail::writeIdentity(w, f.identity);
    w.u64(f.groupCount);
    w.u64(f.groupsCounted);
    w.u64(f.sumSimtClocks);
    w.u64(f.sumMimdClocks);
    w.f64(f.sumMeasuredLoss);
    w.f64(f.sumCountsLoss);
    w.u64(f.sumMaxCounts);
    w.u64(f.sumCounts);
    w.u64(f.droppedSamples);
    w.u32(static_cast<std::uint32_t>(f.histogram.size()));
    for (const HistogramEntry& e : f.histogram) {
      w.u32(e.bin);
      w.u64(e.count);
    }
    detail::finishFrame(out, start, FrameType::LaunchSummary);
  } catch (...) {
    out.resize(start);
    throw;
  }
}

/// Checks everything the format requires of a GroupSamples frame. Throws FrameError (OverLimit/Invalid).
inline void validateFrame(const GroupSamples& f) {
    detail::checkIdentity(f.identity);
    detail::checkCount(f.groupCount, "groupCount");
    if (f.selection != Selection::Stride && f.selection != Selection::Hash && f.selection != Selection::Block)
      throw FrameError(FrameErrorCode::Invalid, "selection must be 0 (stride), 1 (hash) or 2 (block)");
    if ((f.selection == Selection::Block) != (f.groupsPerBlock != 0))
      throw FrameError(FrameErrorCode::Invalid, "groupsPerBlock must be 1..65535 with selection block and 0 otherwise, got " +
                                                    std::to_string(f.groupsPerBlock));
    if (f.samplingStride == 0) throw FrameError(FrameErrorCode::Invalid, "samplingStride must be >= 1, got 0");
    if (f.groups.size() > kMaxGroupSamples)
      throw FrameError(FrameErrorCode::OverLimit, "sampled groups per frame must be at most 4096, got " + std::to_string(f.groups.size()));
    const std::size_t n = f.identity.groupSize;
    for (const GroupSample& g : f.groups) {
      if (g.groupIndex >= f.groupCount)
        throw FrameError(FrameErrorCode::Invalid, "groupIndex must be < groupCount (" + std::to_string(f.groupCount) +
                                                      "), got " + std::to_string(g.groupIndex));
      if (g.laneCounts.size() != n || g.laneFinishClocks.size() != n)
        throw FrameError(FrameErrorCode::Invalid, "each sample needs groupSize (" + std::to_string(n) + ") lane counts and finish clocks");
    }
}

/// Appends one encoded GroupSamples frame to `out`. Throws FrameError (OverLimit/Invalid); `out`
/// is restored to its previous size in that case.
inline void appendFrame(std::vector<std::uint8_t>& out, const GroupSamples& f) {
  validateFrame(f);
  const std::size_t n = f.identity.groupSize;
  const std::size_t start = out.size();
  try {
    out.resize(start + kFrameHeaderBytes);
    out.reserve(out.size() + 900 + f.groups.size() * (24 + 12 * n));
    detail::ByteWriter w(out);
    detail::writeIdentity(w, f.identity);
    w.u64(f.groupCount);
    w.u8(static_cast<std::uint8_t>(f.selection));
    w.u8(0);
    w.u8(static_cast<std::uint8_t>(f.groupsPerBlock & 0xFF));  // u16 LE at +10
    w.u8(static_cast<std::uint8_t>(f.groupsPerBlock >> 8));
    w.u32(f.samplingStride);
    w.u32(static_cast<std::uint32_t>(f.groups.size()));
    for (const GroupSample& g : f.groups) {
      w.u64(g.groupIndex);
      w.u64(g.startClock);
      w.u64(g.endClock);
      for (std::uint32_t c : g.laneCounts) w.u32(c);
      for (std::uint64_t c : g.laneFinishClocks) w.u64(c);
    }
    detail::finishFrame(out, start, FrameType::GroupSamples);
  } catch (...) {
    out.resize(start);
    throw;
  }
}

/// Encodes one frame. Throws FrameError (OverLimit/Invalid).
inline std::vector<std::uint8_t> encodeFrame(const LaunchSummary& f) {
  std::vector<std::uint8_t> out;
  appendFrame(out, f);
  return out;
}
inline std::vector<std::uint8_t> encodeFrame(const GroupSamples& f) {
  std::vector<std::uint8_t> out;
  appendFrame(out, f);
  return out;
}
inline std::vector<std::uint8_t> encodeFrame(const Frame& f) {
  return std::visit([](const auto& x) { return encodeFrame(x); }, f);
}

// ---------------------------------------------------------------------------------------------
// Decoding.

namespace detail {

class ByteReader {
 public:
  ByteReader(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  std::size_t remaining() const { return n_ - pos_; }
  void need(std::size_t k, const char* field) const {
    if (remaining() < k)
      throw FrameError(FrameErrorCode::Invalid, std::string("payload ends inside ") + field + " (needs " + std::to_string(k) +
                                                    " bytes, " + std::to_string(remaining()) + " left)");
  }
  std::uint8_t u8(const char* field) { need(1, field); return p_[pos_++]; }
  std::uint16_t u16(const char* field) { return static_cast<std::uint16_t>(le(2, field)); }
  std::uint32_t u32(const char* field) { return static_cast<std::uint32_t>(le(4, field)); }
  std::uint64_t u64(const char* field) { return le(8, field); }
  double f64(const char* field) {
    const std::uint64_t bits = le(8, field);
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  void bytes(std::uint8_t* dst, std::size_t k, const char* field) {
    need(k, field);
    std::memcpy(dst, p_ + pos_, k);
    pos_ += k;
  }
  std::string str(const char* field) {
    const std::size_t len = u8(field);
    need(len, field);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  std::uint64_t le(int k, const char* field) {
    need(static_cast<std::size_t>(k), field);
    std::uint64_t v = 0;
    for (int i = 0; i < k; ++i) v |= static_cast<std::uint64_t>(p_[pos_ + i]) << (8 * i);
    pos_ += static_cast<std::size_t>(k);
    return v;
  }
  const std::uint8_t* p_;
  std::size_t n_;
  std::size_t pos_ = 0;
};

inline FrameIdentity readIdentity(ByteReader& r) {
  FrameIdentity id;
  id.launchId = r.u64("launchId");
  id.frameSequence = r.u32("frameSequence");
  const std::uint8_t source = r.u8("source");
  if (source > 1) throw FrameError(FrameErrorCode::Invalid, "source must be 0 (cuda) or 1 (cpu), got " + std::to_string(source));
  id.source = static_cast<Source>(source);
  id.groupSize = r.u8("groupSize");
  const std::uint8_t flags = r.u8("flags");
  if (flags > 1) throw FrameError(FrameErrorCode::Invalid, "flags bits 1..7 must be 0, got " + std::to_string(flags));
  id.sync = (flags & 1u) != 0;
  const std::uint8_t reserved = r.u8("reserved");
  if (reserved != 0) throw FrameError(FrameErrorCode::Invalid, "reserved byte must be 0, got " + std::to_string(reserved));
  id.startUnixNanos = r.u64("startUnixNanos");
  id.endUnixNanos = r.u64("endUnixNanos");
  id.device.clockHz = r.u64("clockHz");
  r.bytes(id.device.uuid.data(), 16, "device uuid");
  id.device.computeCapabilityMajor = r.u8("computeCapability major");
  id.device.computeCapabilityMinor = r.u8("computeCapability minor");
  id.job = r.str("job");
  id.kernel = r.str("kernel");
  id.device.name = r.str("device name");
  checkIdentity(id);
  return id;
}

inline LaunchSummary readLaunchSummary(ByteReader& r) {
  LaunchSummary f;
  f.identity = readIdentity(r);
  f.groupCount = r.u64("groupCount");
  f.groupsCounted = r.u64("groupsCounted");
  f.sumSimtClocks = r.u64("sumSimtClocks");
  f.sumMimdClocks = r.u64("sumMimdClocks");
  f.sumMeasuredLoss = r.f64("sumMeasuredLoss");
  f.sumCountsLoss = r.f64("sumCountsLoss");
  f.sumMaxCounts = r.u64("sumMaxCounts");
  f.sumCounts = r.u64("sumCounts");
  f.droppedSamples = r.u64("droppedSamples");
  const std::uint32_t k = r.u32("histogramEntries");
  if (k > kMaxHistogramEntries)
    throw FrameError(FrameErrorCode::OverLimit, "histogram entries must be at most 2432, got " + std::to_string(k));
  r.need(static_cast<std::size_t>(k) * 12, "histogram entries");
  f.histogram.resize(k);
  for (std::uint32_t i = 0; i < k; ++i) {
    f.histogram[i].bin = r.u32("histogram bin");
    f.histogram[i].count = r.u64("histogram count");
  }
  return f;
}

inline GroupSamples readGroupSamples(ByteReader& r) {
  GroupSamples f;
  f.identity = readIdentity(r);
  f.groupCount = r.u64("groupCount");
  const std::uint8_t selection = r.u8("selection");
  if (selection > 2) throw FrameError(FrameErrorCode::Invalid, "selection must be 0 (stride), 1 (hash) or 2 (block), got " + std::to_string(selection));
  f.selection = static_cast<Selection>(selection);
  if (r.u8("reserved") != 0) throw FrameError(FrameErrorCode::Invalid, "reserved byte after selection must be 0");
  const std::uint8_t low = r.u8("groupsPerBlock");
  const std::uint8_t high = r.u8("groupsPerBlock");
  f.groupsPerBlock = static_cast<std::uint16_t>(low | (high << 8));
  if ((f.selection == Selection::Block) != (f.groupsPerBlock != 0))
    throw FrameError(FrameErrorCode::Invalid, "groupsPerBlock must be 1..65535 with selection block and 0 otherwise, got " +
                                                  std::to_string(f.groupsPerBlock));
  f.samplingStride = r.u32("samplingStride");
  const std::uint32_t m = r.u32("sampleCount");
  if (m > kMaxGroupSamples)
    throw FrameError(FrameErrorCode::OverLimit, "sampled groups per frame must be at most 4096, got " + std::to_string(m));
  const std::size_t n = f.identity.groupSize;
  r.need(static_cast<std::size_t>(m) * (24 + 12 * n), "samples");
  f.groups.resize(m);
  for (GroupSample& g : f.groups) {
    g.groupIndex = r.u64("groupIndex");
    g.startClock = r.u64("startClock");
    g.endClock = r.u64("endClock");
    g.laneCounts.resize(n);
    g.laneFinishClocks.resize(n);
    for (std::size_t i = 0; i < n; ++i) g.laneCounts[i] = r.u32("laneCounts");
    for (std::size_t i = 0; i < n; ++i) g.laneFinishClocks[i] = r.u64("laneFinishClocks");
  }
  return f;
}

}  // namespace detail

/// Reads and checks a frame header (first 16 bytes): Truncated, BadMagic, UnknownVersion,
/// UnknownType, OverLimit. Does not look at the payload.
inline FrameHeader decodeFrameHeader(const std::uint8_t* data, std::size_t size) {
  if (size < kFrameHeaderBytes)
    throw FrameError(FrameErrorCode::Truncated, "frame header needs 16 bytes, got " + std::to_string(size));
  if (std::memcmp(data, kFrameMagic, 4) != 0) throw FrameError(FrameErrorCode::BadMagic, "frame must start with magic 'WWFR' (57 57 46 52)");
  FrameHeader h;
  h.version = static_cast<std::uint16_t>(data[4] | (data[5] << 8));
  h.type = static_cast<std::uint16_t>(data[6] | (data[7] << 8));
  h.payloadLength = static_cast<std::uint32_t>(data[8]) | (static_cast<std::uint32_t>(data[9]) << 8) |
                    (static_cast<std::uint32_t>(data[10]) << 16) | (static_cast<std::uint32_t>(data[11]) << 24);
  h.payloadCrc32c = static_cast<std::uint32_t>(data[12]) | (static_cast<std::uint32_t>(data[13]) << 8) |
                    (static_cast<std::uint32_t>(data[14]) << 16) | (static_cast<std::uint32_t>(data[15]) << 24);
  if (h.version != kFrameVersion)
    throw FrameError(FrameErrorCode::UnknownVersion, "frame version must be 1, got " + std::to_string(h.version));
  if (h.type != 1 && h.type != 2)
    throw FrameError(FrameErrorCode::UnknownType, "frame type must be 1 (LaunchSummary) or 2 (GroupSamples), got " + std::to_string(h.type));
  if (h.payloadLength > kMaxPayloadBytes)
    throw FrameError(FrameErrorCode::OverLimit, "payload length must be at most 4194304 bytes, got " + std::to_string(h.payloadLength));
  return h;
}

/// Decodes exactly one frame occupying all `size` bytes. Throws FrameError with the codes of SPEC.md.
inline Frame decodeFrame(const std::uint8_t* data, std::size_t size) {
  const FrameHeader h = decodeFrameHeader(data, size);
  const std::size_t total = kFrameHeaderBytes + h.payloadLength;
  if (size < total)
    throw FrameError(FrameErrorCode::Truncated, "frame declares " + std::to_string(total) + " bytes, got " + std::to_string(size));
  if (size > total)
    throw FrameError(FrameErrorCode::Invalid, "expected exactly one frame of " + std::to_string(total) + " bytes, got " +
                                                  std::to_string(size) + " (trailing bytes)");
  const std::uint8_t* payload = data + kFrameHeaderBytes;
  const std::uint32_t crc = crc32c(payload, h.payloadLength);
  if (crc != h.payloadCrc32c) throw FrameError(FrameErrorCode::CrcMismatch, "payload CRC-32C mismatch");
  detail::ByteReader r(payload, h.payloadLength);
  Frame frame = h.type == 1 ? Frame{detail::readLaunchSummary(r)} : Frame{detail::readGroupSamples(r)};
  if (r.remaining() != 0)
    throw FrameError(FrameErrorCode::Invalid, std::to_string(r.remaining()) + " bytes left over after the last payload field");
  // Semantic checks shared with the encoder (bins increasing, histogram total, groupIndex < groupCount, ...).
  std::visit([](const auto& f) { validateFrame(f); }, frame);
  return frame;
}

inline Frame decodeFrame(const std::vector<std::uint8_t>& bytes) { return decodeFrame(bytes.data(), bytes.size()); }

/// Splits a buffer of concatenated frames and decodes each; throws FrameError on the first problem.
inline std::vector<Frame> decodeFrames(const std::uint8_t* data, std::size_t size) {
  std::vector<Frame> frames;
  std::size_t pos = 0;
  while (pos < size) {
    const FrameHeader h = decodeFrameHeader(data + pos, size - pos);
    const std::size_t total = kFrameHeaderBytes + h.payloadLength;
    if (size - pos < total)
      throw FrameError(FrameErrorCode::Truncated, "frame at offset " + std::to_string(pos) + " declares " + std::to_string(total) +
                                                      " bytes, " + std::to_string(size - pos) + " left");
    frames.push_back(decodeFrame(data + pos, total));
    pos += total;
  }
  return frames;
}

}  // namespace warpwatch
