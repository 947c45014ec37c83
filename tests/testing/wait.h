#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "tests/testing/receiver.h"

namespace webhookd::testing {

// Polls `done` every `poll` until it holds or `timeout` has passed; returns its last answer.
inline bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds poll = std::chrono::milliseconds(50)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(poll);
  }
  return done();
}

// A scripted receiver's answer with just a status.
inline Answer Status(int status) {
  Answer answer;
  answer.status = status;
  return answer;
}

}  // namespace webhookd::testing
