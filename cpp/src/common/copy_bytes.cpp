#include "cubescale/common/copy_bytes.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cubescale {

void copy_bytes(void* dst, const void* src, std::size_t n) {
  if (!near_alias(dst, src, n)) {
    std::memcpy(dst, src, n);
    return;
  }
#if defined(__SSE2__)
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const auto a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const auto b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const auto c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const auto e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + i, s + i, n - i);  // under 64 bytes: no string copy
#else
  std::memcpy(dst, src, n);  // the slow case is of x86 string copies
#endif
}

}  // namespace cubescale
