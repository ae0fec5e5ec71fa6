// The probe's launch-shape rules (launch-shape.hpp): which shapes it accepts, and its numbering
// of threads for 1-D, 2-D and 3-D launches against an independent enumeration in CUDA's order
// (blocks x fastest, then y, then z; inside a block threads x fastest, then y, then z; each 32
// consecutive threads form a warp).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "warpwatch/launch-shape.hpp"

namespace ww = warpwatch;

namespace {

struct Shape {
  unsigned gx, gy, gz, dx, dy, dz;
};

std::string launchShapeError(const Shape& s) {
  try {
    ww::checkProbeLaunchShape(s.gx, s.gy, s.gz, s.dx, s.dy, s.dz);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(LaunchShape, AcceptsOneTwoAndThreeDimensionalLaunchesOfWholeWarps) {
  for (const Shape& s : {Shape{1024, 1, 1, 256, 1, 1}, Shape{64, 8, 1, 16, 16, 1}, Shape{4, 3, 2, 8, 4, 2}, Shape{1, 1, 1, 32, 1, 1}, Shape{1, 1, 1, 1, 1, 1024},
                         Shape{7, 1, 1, 2, 16, 1}}) {
    EXPECT_EQ(launchShapeError(s), "") << s.gx << ',' << s.gy << ',' << s.gz << " × " << s.dx << ',' << s.dy << ',' << s.dz;
  }
}

TEST(LaunchShape, RejectsPartialWarpsOversizeBlocksAndEmptyDimensionsWithTheCode) {
  for (const Shape& s : {Shape{64, 1, 1, 10, 3, 1}, Shape{1, 1, 1, 48, 1, 1}, Shape{1, 1, 1, 64, 32, 1}, Shape{0, 1, 1, 32, 1, 1}, Shape{1, 1, 1, 32, 0, 1},
                         Shape{1, 0, 1, 32, 1, 1}}) {
    const std::string error = launchShapeError(s);
    EXPECT_EQ(error.rfind("WW_ERR_KERNELS_LAUNCH_SHAPE: ", 0), 0u) << error;
  }
  EXPECT_NE(launchShapeError(Shape{64, 1, 1, 10, 3, 1}).find("30 threads"), std::string::npos);
}

TEST(LaunchShape, NumbersThreadsAsTheHardwareFormsWarpsInEveryDimensionality) {
  for (const Shape& s : {Shape{3, 1, 1, 64, 1, 1}, Shape{3, 2, 1, 16, 4, 1}, Shape{2, 3, 2, 8, 2, 4}, Shape{2, 2, 2, 4, 4, 2}}) {
    ASSERT_EQ(launchShapeError(s), "");
    std::uint64_t linear = 0;  // CUDA's order, counted independently of probeThreadPosition
    std::set<std::pair<std::uint64_t, unsigned>> seen;
    for (unsigned bz = 0; bz < s.gz; ++bz)
      for (unsigned by = 0; by < s.gy; ++by)
        for (unsigned bx = 0; bx < s.gx; ++bx)
          for (unsigned tz = 0; tz < s.dz; ++tz)
            for (unsigned ty = 0; ty < s.dy; ++ty)
              for (unsigned tx = 0; tx < s.dx; ++tx, ++linear) {
                const ww::ProbeThreadPosition p = ww::probeThreadPosition(bx, by, bz, s.gx, s.gy, tx, ty, tz, s.dx, s.dy, s.dz);
                EXPECT_EQ(p.globalWarp, linear / 32);
                EXPECT_EQ(p.lane, linear % 32);
                seen.insert({p.globalWarp, p.lane});
              }
    // Every thread has its own (warp, lane): no two threads share a group slot.
    EXPECT_EQ(seen.size(), linear);
    // Groups per launch = the capacity the host helpers compute from the total block count.
    const std::uint64_t blocks = static_cast<std::uint64_t>(s.gx) * s.gy * s.gz;
    EXPECT_EQ(ww::probeGroupCapacity(blocks, s.dx * s.dy * s.dz, 8), (linear / 32) * 4);
  }
  // The documented example.
  const ww::ProbeThreadPosition example = ww::probeThreadPosition(1, 0, 0, 4, 1, 5, 1, 0, 16, 16, 1);
  EXPECT_EQ(example.globalWarp, 8u);
  EXPECT_EQ(example.lane, 21u);
}
