#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "core/erasure.h"
#include "core/scope.h"

namespace webhookd {

// What a round of erasing did.
struct ErasureRound {
  int finished = 0;  // erasures done in it
  int running = 0;   // erasures still running after it
  // A retention step holds the history (a day being moved and dropped): the running ones
  // wait for the next round instead of trying again at once.
  bool held_back = false;
};

// The erasure of a subject (docs/privacy.md). Thread-safe; nothing here throws.
class ErasureStore {
 public:
  // How many erasures may run at once per tenant (and for every tenant at once).
  static constexpr int kMaxRunning = 100;

  virtual ~ErasureStore() = default;
  // Records an erasure of `subject`, running, within the scope's tenant (or within
  // `tenant_id` when the scope has none; nullopt: every tenant), and keeps only the
  // subject's SHA-256. The work is RunErasures'. kTooMany when kMaxRunning erasures of
  // that tenant are running.
  virtual Result<Erasure> RequestErasure(const std::string& subject,
                                         const std::optional<std::string>& tenant_id,
                                         const Scope& scope) = 0;
  // kNotFound outside the scope, as for an unknown id.
  virtual Result<Erasure> GetErasure(int64_t id, const Scope& scope) = 0;
  // Carries out running erasures `batch` events at a time, one batch of each in turn
  // (oldest first), each batch its own transaction, at most `max_batches` batches in all;
  // an erasure another process is carrying out is skipped.
  virtual Result<ErasureRound> RunErasures(int batch, int max_batches) = 0;
};

}  // namespace webhookd
