#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace webhookd::testing {

// One accepted connection of a RawListener, for handlers that misbehave on purpose.
class RawConnection {
 public:
  RawConnection(int fd, const std::atomic<bool>& stopping, std::atomic<int>& requests)
      : fd_(fd), stopping_(stopping), requests_(requests) {}

  // Reads one HTTP/1.1 request (head and a Content-Length body) into `request`; false when
  // the peer closed first or the listener is stopping.
  bool ReadRequest(std::string* request = nullptr);
  // Writes all of `data`; false when the peer went away or the listener is stopping.
  bool Write(std::string_view data);
  // Sleeps `d`; false (early) when the peer hangs up or the listener stops.
  bool Sleep(std::chrono::milliseconds d);
  // Reads what has arrived, up to `max` bytes, without waiting; false when the peer closed
  // or the listener is stopping.
  bool ReadAvailable(size_t max);
  // Blocks until the peer closes the connection or the listener stops.
  void WaitForPeerClose();

 private:
  int fd_;
  const std::atomic<bool>& stopping_;
  std::atomic<int>& requests_;
  std::string buffered_;
};

// A bare TCP listener on one address (IPv4 or IPv6 literal) that counts the connections
// it accepts and hands each one, on its own thread, to a handler that may answer
// anything, slowly, partially or never. The connection is closed when the handler returns.
class RawListener {
 public:
  using Handler = std::function<void(RawConnection& connection)>;

  // `port` 0 picks a free one. Throws when the address cannot be bound.
  RawListener(std::string host, int port, Handler handler);
  ~RawListener();
  RawListener(const RawListener&) = delete;
  RawListener& operator=(const RawListener&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path = "/hook") const;
  int accepted() const { return accepted_.load(); }
  int requests() const { return requests_.load(); }

  // Handlers for the usual misbehaviours. Each reads the request first.
  static Handler NeverAnswers();
  static Handler Trickles(std::chrono::milliseconds per_byte);
  static Handler ClosesMidResponse();
  static Handler HugeBody(size_t bytes);
  static Handler Answers(int status);

 private:
  void AcceptLoop();

  std::string host_;
  int port_ = 0;
  int fd_ = -1;
  Handler handler_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::atomic<int> requests_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> connections_;
};

}  // namespace webhookd::testing
