#pragma once

namespace webhookd {

// A destination's adaptive cap on attempts in flight (`effective_max_in_flight`), between
// 1 and its configured `max_in_flight`:
// - each 429 or 503 halves it (at least 1);
// - each run of `effective` successes in a row raises it by one, back up to the max;
// - after a circuit recovers it restarts at 1 and doubles with each success until it
//   reaches the max (a ramp, not a flood). A 429 or 503 during the ramp halves it and
//   ends the ramp: from there it grows by one per run again.
class ConcurrencyLimit {
 public:
  // At the max, not ramping. `max` below 1 counts as 1.
  explicit ConcurrencyLimit(int max);
  ConcurrencyLimit(int max, int effective, int success_run, bool ramping);

  int max() const { return max_; }
  int effective() const { return effective_; }
  int success_run() const { return success_run_; }
  bool ramping() const { return ramping_; }

  void OnThrottle();
  void OnSuccess();
  // The circuit closed after a successful probe.
  void Restart();

 private:
  int max_;
  int effective_;
  int success_run_ = 0;
  bool ramping_ = false;
};

}  // namespace webhookd
