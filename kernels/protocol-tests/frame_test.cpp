// GoogleTest tests of warpwatch/frame.hpp: CRC-32C, histogram bins, round trips, every error code,
// and random mutations that must fail only with FrameError.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "golden_frames.hpp"
#include "warpwatch/frame.hpp"

using namespace warpwatch;

namespace {

std::vector<std::uint8_t> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }

void putU32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
}

// Recompute the header CRC after editing the payload, so that the edit reaches the field checks.
void fixCrc(std::vector<std::uint8_t>& b) { putU32(b, 12, crc32c(b.data() + kFrameHeaderBytes, b.size() - kFrameHeaderBytes)); }

FrameErrorCode codeOf(const std::vector<std::uint8_t>& b) {
  try {
    (void)decodeFrame(b.data(), b.size());
  } catch (const FrameError& e) {
    return e.code();
  }
  ADD_FAILURE() << "decodeFrame accepted the bytes";
  return FrameErrorCode::Invalid;
}

FrameErrorCode encodeCodeOf(const LaunchSummary& f) {
  try {
    (void)encodeFrame(f);
  } catch (const FrameError& e) {
    return e.code();
  }
  ADD_FAILURE() << "encodeFrame accepted the frame";
  return FrameErrorCode::Invalid;
}

// Payload offset of the first string (job length byte), SPEC.md identity table.
constexpr std::size_t kJobOffset = kFrameHeaderBytes + 58;

}  // namespace

TEST(Crc32c, MatchesTheCheckValueOfTheCastagnoliPolynomial) {
  const auto b = bytesOf("123456789");
  EXPECT_EQ(crc32c(b.data(), b.size()), 0xE3069283u);
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
}

TEST(Crc32c, ContinuesARunningChecksumAcrossChunks) {
  const auto b = bytesOf("The quick brown fox jumps over the lazy dog");
  const std::uint32_t whole = crc32c(b.data(), b.size());
  EXPECT_EQ(whole, 0x22620404u);  // published CRC-32C of this sentence
  EXPECT_EQ(crc32c(b.data() + 10, b.size() - 10, crc32c(b.data(), 10)), whole);
}

TEST(HistogramBins, AreExactBelow1024) {
  for (std::uint32_t v = 0; v < 1024; ++v) {
    EXPECT_EQ(histogramBinOf(v), v);
    EXPECT_EQ(histogramBinLow(v), v);
    EXPECT_EQ(histogramBinHigh(v), v);
  }
}

TEST(HistogramBins, TileAllU32ValuesContiguouslyWithBoundedRelativeWidth) {
  EXPECT_EQ(histogramBinLow(0), 0u);
  EXPECT_EQ(histogramBinHigh(kHistogramBinCount - 1), 0xFFFFFFFFu);
  for (std::uint32_t bin = 0; bin + 1 < kHistogramBinCount; ++bin) {
    ASSERT_EQ(static_cast<std::uint64_t>(histogramBinHigh(bin)) + 1, histogramBinLow(bin + 1)) << "bin " << bin;
  }
  for (std::uint32_t bin = 0; bin < kHistogramBinCount; ++bin) {
    const double low = histogramBinLow(bin);
    const double high = histogramBinHigh(bin);
    EXPECT_EQ(histogramBinOf(histogramBinLow(bin)), bin);
    EXPECT_EQ(histogramBinOf(histogramBinHigh(bin)), bin);
    if (bin >= 1024) {
      EXPECT_LT((high - low) / low, 1.0 / 64);
    }
    // Representative error bound 2^-7, worst at the ends of the bin.
    const double rep = histogramBinRepresentative(bin);
    if (low > 0) {
      EXPECT_LE((rep - low) / low, 1.0 / 128) << "bin " << bin;
    }
    if (high > 0) {
      EXPECT_LE((high - rep) / high, 1.0 / 128) << "bin " << bin;
    }
  }
}

TEST(HistogramBins, AgreeWithABruteForceScanUpTo2To20) {
  std::uint32_t bin = 0;
  for (std::uint32_t v = 0; v < (1u << 20); ++v) {
    if (v > histogramBinHigh(bin)) ++bin;
    ASSERT_EQ(histogramBinOf(v), bin) << "value " << v;
  }
}

TEST(Encode, RoundTripsTheGoldenFramesByteForByte) {
  for (const Frame& f : {Frame{golden::launchSummary()}, Frame{golden::groupSamples()}, Frame{golden::extremes()},
                         Frame{golden::emptySamples()}}) {
    const auto bytes = encodeFrame(f);
    const Frame back = decodeFrame(bytes);
    EXPECT_EQ(encodeFrame(back), bytes);
  }
}

TEST(Decode, ReturnsTheFieldsThatWereEncoded) {
  const auto bytes = encodeFrame(golden::groupSamples());
  const GroupSamples f = std::get<GroupSamples>(decodeFrame(bytes));
  EXPECT_EQ(f.identity.job, "golden-job");
  EXPECT_EQ(f.identity.launchId, 0x0123456789ABCDEFull);
  EXPECT_EQ(f.selection, Selection::Hash);
  ASSERT_EQ(f.groups.size(), 2u);
  EXPECT_EQ(f.groups[1].endClock, 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(f.groups[1].laneCounts[3], 0xFFFFFFFFu);
  const LaunchSummary s = std::get<LaunchSummary>(decodeFrame(encodeFrame(golden::extremes())));
  EXPECT_EQ(s.identity.job, "j\xC3\xB6" "b-\xE6\x9D\xB1\xE4\xBA\xAC");
  EXPECT_EQ(s.sumMeasuredLoss, 1.5e300);
  EXPECT_EQ(s.histogram.at(0).count, ((std::uint64_t{1} << 48) - 1) * 32);
}

TEST(Decode, SplitsConcatenatedFrames) {
  const auto files = golden::vectorFiles();
  const auto& stream = files.back().second;
  EXPECT_EQ(decodeFrames(stream.data(), stream.size()).size(), 4u);
}

TEST(Decode, RejectsEachHeaderProblemWithItsCode) {
  const auto good = encodeFrame(golden::launchSummary());
  EXPECT_EQ(codeOf({good.begin(), good.begin() + 10}), FrameErrorCode::Truncated);
  EXPECT_EQ(codeOf({good.begin(), good.end() - 1}), FrameErrorCode::Truncated);
  auto b = good;
  b[0] = 'X';
  EXPECT_EQ(codeOf(b), FrameErrorCode::BadMagic);
  b = good;
  b[4] = 2;
  EXPECT_EQ(codeOf(b), FrameErrorCode::UnknownVersion);
  b = good;
  b[6] = 3;
  EXPECT_EQ(codeOf(b), FrameErrorCode::UnknownType);
  b = good;
  putU32(b, 8, kMaxPayloadBytes + 1);
  EXPECT_EQ(codeOf(b), FrameErrorCode::OverLimit);
  b = good;
  b[b.size() - 1] ^= 0x01;
  EXPECT_EQ(codeOf(b), FrameErrorCode::CrcMismatch);
  b = good;
  b.push_back(0);
  EXPECT_EQ(codeOf(b), FrameErrorCode::Invalid);
}

TEST(Decode, RejectsEachPayloadProblemWithItsCode) {
  const auto good = encodeFrame(golden::launchSummary());
  auto b = good;
  b[kFrameHeaderBytes + 13] = 33;  // groupSize
  fixCrc(b);
  EXPECT_EQ(codeOf(b), FrameErrorCode::OverLimit);
  b = good;
  b[kFrameHeaderBytes + 13] = 0;
  fixCrc(b);
  EXPECT_EQ(codeOf(b), FrameErrorCode::Invalid);
  b = good;
  b[kFrameHeaderBytes + 14] = 2;  // flags bit 1
  fixCrc(b);
  EXPECT_EQ(codeOf(b), FrameErrorCode::Invalid);
  b = good;
  b[kJobOffset + 1] = 0xFF;  // invalid UTF-8 in job
  fixCrc(b);
  EXPECT_EQ(codeOf(b), FrameErrorCode::Invalid);
  b = good;
  b[kJobOffset + 1] = '/';
  fixCrc(b);
  EXPECT_EQ(codeOf(b), FrameErrorCode::Invalid);
  // Histogram entry count field: last 8 entries * 12 bytes + 4 bytes before the end.
  const std::size_t entriesAt = good.size() - 8 * 12 - 4;
  b = good;
  putU32(b, entriesAt, kMaxHistogramEntries + 1);
  fixCrc(b);
  EXPECT_EQ(codeOf(b), FrameErrorCode::OverLimit);
  b = good;
  putU32(b, entriesAt, 0xFFFFFFFFu);  // more entries than bytes: must not allocate, just reject
  fixCrc(b);
  EXPECT_EQ(codeOf(b), FrameErrorCode::OverLimit);
  b = good;
  b[good.size() - 8] += 1;  // last histogram count + 1: total no longer groupsCounted * n
  fixCrc(b);
  EXPECT_EQ(codeOf(b), FrameErrorCode::Invalid);
}

TEST(Encode, RejectsFramesTheFormatCannotCarryAndLeavesTheOutputUntouched) {
  LaunchSummary f = golden::launchSummary();
  f.identity.job = std::string(256, 'a');
  EXPECT_EQ(encodeCodeOf(f), FrameErrorCode::OverLimit);
  f = golden::launchSummary();
  f.identity.groupSize = 48;
  EXPECT_EQ(encodeCodeOf(f), FrameErrorCode::OverLimit);
  f = golden::launchSummary();
  f.groupsCounted = 4;
  EXPECT_EQ(encodeCodeOf(f), FrameErrorCode::Invalid);
  f = golden::launchSummary();
  f.sumCounts = kMaxCount + 1;
  EXPECT_EQ(encodeCodeOf(f), FrameErrorCode::OverLimit);
  f = golden::launchSummary();
  f.sumMeasuredLoss = std::nan("");
  EXPECT_EQ(encodeCodeOf(f), FrameErrorCode::Invalid);
  GroupSamples g = golden::groupSamples();
  g.groups.resize(kMaxGroupSamples + 1, g.groups[0]);
  std::vector<std::uint8_t> out = {1, 2, 3};
  EXPECT_THROW(appendFrame(out, g), FrameError);
  EXPECT_EQ(out, (std::vector<std::uint8_t>{1, 2, 3}));
}

// The identity rule of contracts/stream-identity.ts (no control character, no backslash before
// ',', '=', a space or the end), with the messages of protocol/validate-frame.ts.
std::string encodeMessageOf(const LaunchSummary& f) {
  try {
    (void)encodeFrame(f);
  } catch (const FrameError& e) {
    return e.what();
  }
  ADD_FAILURE() << "encodeFrame accepted the frame";
  return "";
}

TEST(Encode, RejectsControlCharactersAndUnstorableBackslashesInEveryIdentityString) {
  LaunchSummary f = golden::launchSummary();
  f.identity.kernel = "k\nzz";
  EXPECT_EQ(encodeMessageOf(f), "WW_ERR_FRAME_INVALID: kernel must not contain control characters (U+000A at byte 2)");
  f = golden::launchSummary();
  f.identity.job = "bs\\";
  EXPECT_EQ(encodeMessageOf(f), "WW_ERR_FRAME_INVALID: job must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at byte 3");
  f = golden::launchSummary();
  f.identity.device.name = "H100\xC2\x85";
  EXPECT_EQ(encodeMessageOf(f), "WW_ERR_FRAME_INVALID: device name must not contain control characters (U+0085 at byte 5)");
  f = golden::launchSummary();
  f.identity.kernel = "a\\=b";
  EXPECT_EQ(encodeCodeOf(f), FrameErrorCode::Invalid);
  for (int c : {0x00, 0x09, 0x1F, 0x7F}) {
    f = golden::launchSummary();
    f.identity.job = std::string("j") + static_cast<char>(c);
    EXPECT_EQ(encodeCodeOf(f), FrameErrorCode::Invalid) << c;
  }
  // Allowed: a backslash elsewhere, U+00A0 (the first code point after C1), other text.
  for (const char* fine : {"C:\\x\\y", "a\\\\b", "nbsp\xC2\xA0x", "escape-time \xE2\x9C\x93"}) {
    f = golden::launchSummary();
    f.identity.kernel = fine;
    EXPECT_NO_THROW((void)encodeFrame(f)) << fine;
  }
}

TEST(Decode, FailsOnlyWithFrameErrorOnRandomMutations) {
  std::mt19937_64 rng(20240611);
  const auto files = golden::vectorFiles();
  int decoded = 0;
  int rejected = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    auto b = files[static_cast<std::size_t>(trial) % 3].second;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const std::size_t at = rng() % b.size();
      switch (rng() % 3) {
        case 0: b[at] = static_cast<std::uint8_t>(rng()); break;
        case 1: b.resize(at); break;
        default: b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng())); break;
      }
      if (b.empty()) b.push_back(0);
    }
    if (rng() % 2 == 0 && b.size() >= kFrameHeaderBytes) fixCrc(b);  // half the time reach the field checks
    try {
      (void)decodeFrame(b.data(), b.size());
      ++decoded;
    } catch (const FrameError&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_EQ(decoded + rejected, 20000);
}
