#pragma once

#include <cstddef>
#include <string>

namespace webhookd {

class Random {
 public:
  virtual ~Random() = default;
  // Uniform in [0, 1).
  virtual double Unit() = 0;
};

// Thread-safe; each thread draws from its own generator seeded by the OS.
class SystemRandom final : public Random {
 public:
  double Unit() override;
};

// `n` bytes from OpenSSL's RAND_bytes; aborts if the CSPRNG fails, since every
// secret and key would be weak.
std::string SecureRandomBytes(size_t n);

}  // namespace webhookd
