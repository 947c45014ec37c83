#include "base/random.h"

#include <openssl/rand.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace webhookd {
namespace {

std::mt19937_64 MakeGenerator() {
  const std::string seed_bytes = SecureRandomBytes(8 * sizeof(uint32_t));
  std::array<uint32_t, 8> words{};
  std::memcpy(words.data(), seed_bytes.data(), seed_bytes.size());
  std::seed_seq seed(words.begin(), words.end());
  return std::mt19937_64(seed);
}

}  // namespace

double SystemRandom::Unit() {
  thread_local std::mt19937_64 generator = MakeGenerator();
  // The top 53 bits make a double in [0, 1) exactly; generate_canonical may return 1.0.
  return static_cast<double>(generator() >> 11) * 0x1.0p-53;
}

std::string SecureRandomBytes(size_t n) {
  std::string bytes(n, '\0');
  if (n == 0) return bytes;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(n)) != 1) {
    std::fputs("webhookd: RAND_bytes failed; refusing to continue with weak randomness\n", stderr);
    std::abort();
  }
  return bytes;
}

}  // namespace webhookd
