#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "core/erasure.h"
#include "core/scope.h"

namespace webhookd {

// The erasure of a subject (docs/privacy.md). Thread-safe; nothing here throws.
class ErasureStore {
 public:
  virtual ~ErasureStore() = default;
  // Records an erasure of `subject`, running, within the scope's tenant (or within
  // `tenant_id` when the scope has none; nullopt: every tenant), and keeps only the
  // subject's SHA-256. The work is RunErasures'.
  virtual Result<Erasure> RequestErasure(const std::string& subject,
                                         const std::optional<std::string>& tenant_id,
                                         const Scope& scope) = 0;
  // kNotFound outside the scope, as for an unknown id.
  virtual Result<Erasure> GetErasure(int64_t id, const Scope& scope) = 0;
  // Carries out every running erasure, each in one transaction; one another process is
  // carrying out is skipped. Returns how many were finished.
  virtual Result<int> RunErasures() = 0;
};

}  // namespace webhookd
