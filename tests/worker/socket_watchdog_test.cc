// The watchdog that ends a call into a broker library overrunning its deadline
// (worker/socket_watchdog.h), on a socket pair.
#include "worker/socket_watchdog.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace webhookd::socket_watchdog_test {
namespace {

using namespace std::chrono_literals;

class SocketPair {
 public:
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  ~SocketPair() {
    close(fds_[0]);
    close(fds_[1]);
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;

  int ours() const { return fds_[0]; }
  int theirs() const { return fds_[1]; }

 private:
  int fds_[2] = {-1, -1};
};

TEST(SocketWatchdogTest, ABlockedReadPastTheDeadlineEndsWithTheSocket) {
  SocketPair pair;
  SocketWatchdog watchdog(10ms);
  watchdog.Arm(pair.ours(), std::chrono::steady_clock::now() + 50ms);
  char byte = 0;
  // Nothing is ever sent: only the shutdown ends this read.
  EXPECT_EQ(recv(pair.ours(), &byte, 1, 0), 0);
  EXPECT_TRUE(watchdog.Fired());
  watchdog.Disarm();
  EXPECT_TRUE(watchdog.Fired()) << "what happened in the call is still known after it";
}

TEST(SocketWatchdogTest, ADisarmedSocketIsLeftAlone) {
  SocketPair pair;
  SocketWatchdog watchdog(10ms);
  watchdog.Arm(pair.ours(), std::chrono::steady_clock::now() + 50ms);
  watchdog.Disarm();
  std::this_thread::sleep_for(150ms);
  EXPECT_FALSE(watchdog.Fired());
  ASSERT_EQ(send(pair.theirs(), "x", 1, 0), 1);
  char byte = 0;
  EXPECT_EQ(recv(pair.ours(), &byte, 1, 0), 1);
  EXPECT_EQ(send(pair.ours(), "y", 1, 0), 1);
}

TEST(SocketWatchdogTest, ArmingAgainForgetsTheLastFiring) {
  SocketPair first;
  SocketPair second;
  SocketWatchdog watchdog(10ms);
  watchdog.Arm(first.ours(), std::chrono::steady_clock::now());
  char byte = 0;
  EXPECT_EQ(recv(first.ours(), &byte, 1, 0), 0);
  watchdog.Disarm();
  ASSERT_TRUE(watchdog.Fired());
  watchdog.Arm(second.ours(), std::chrono::steady_clock::now() + 1h);
  EXPECT_FALSE(watchdog.Fired());
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(watchdog.Fired());
  watchdog.Disarm();
  ASSERT_EQ(send(second.theirs(), "x", 1, 0), 1);
  EXPECT_EQ(recv(second.ours(), &byte, 1, 0), 1);
}

}  // namespace
}  // namespace webhookd::socket_watchdog_test
