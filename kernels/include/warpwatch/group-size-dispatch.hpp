// Compile-time dispatch over the group size, shared by the CPU and CUDA workload programs: each
// workload is compiled once per n = 1..32 with a constant lane count (the CPU compiler vectorises
// the lane loops; the CUDA probe's warp masks and shuffles are constants).
#pragma once

#include <type_traits>
#include <utility>

namespace warpwatch {

namespace detail {
template <typename F, unsigned... I>
void dispatchGroupSizeImpl(unsigned n, F& f, std::integer_sequence<unsigned, I...>) {
  ((n == I + 1 ? (f(std::integral_constant<unsigned, I + 1>{}), 0) : 0), ...);
}
}  // namespace detail

/// Calls f(std::integral_constant<unsigned, N>{}) for the runtime group size n (1..32); does
/// nothing for any other n (the option parser has rejected it already).
template <typename F>
void dispatchGroupSize(unsigned n, F&& f) {
  detail::dispatchGroupSizeImpl(n, f, std::make_integer_sequence<unsigned, 32>{});
}

}  // namespace warpwatch
