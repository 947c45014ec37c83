// The listener's Begin path on a loopback port: a request taken by Begin is answered from
// whichever thread calls `later`, handed back to Admit and Handle when `later` gets
// nullopt, and answered 500 when Begin throws; any other request takes the usual path.
#include "server/http_listener.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace webhookd::http_listener_test {
namespace {

class BeginningHandler : public HttpHandler {
 public:
  std::optional<Reply> Immediate(HttpRequest& head) override {
    if (head.path == "/healthz") return Reply{200, "{}", "application/json", {}};
    return std::nullopt;
  }
  std::optional<Reply> Admit(HttpRequest&) override {
    ++admitted;
    return std::nullopt;
  }
  Reply Handle(HttpRequest& request) override {
    ++handled;
    return Reply{200, R"({"handled":")" + request.body + R"("})", "application/json", {}};
  }
  Reply Refused(int status) override { return Reply{status, "{}", "application/json", {}}; }

  bool Begin(const HttpRequest& request, Later later) override {
    ++begun;
    if (request.path == "/usual") return false;
    if (request.path == "/throw") throw std::runtime_error("a bug");
    if (request.path == "/slow") {
      // A validation that takes as long as the test says, on the thread that called Begin.
      std::unique_lock lock(slow_mu);
      ++slow_waiting;
      slow_cv.notify_all();
      slow_cv.wait_for(lock, std::chrono::seconds(10), [&] { return slow_released; });
      later(Reply{202, "{}", "application/json", {}});
      return true;
    }
    // Answered from a thread of the handler's own, after Begin has returned.
    std::lock_guard lock(mu);
    threads.emplace_back([path = request.path, body = request.body, later = std::move(later)] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (path == "/back") return later(std::nullopt);
      later(Reply{202, R"({"later":")" + body + R"("})", "application/json", {}});
    });
    return true;
  }

  void Join() {
    std::lock_guard lock(mu);
    for (auto& t : threads) t.join();
    threads.clear();
  }

  bool WaitSlow(int n) {
    std::unique_lock lock(slow_mu);
    return slow_cv.wait_for(lock, std::chrono::seconds(10), [&] { return slow_waiting >= n; });
  }
  void ReleaseSlow() {
    std::lock_guard lock(slow_mu);
    slow_released = true;
    slow_cv.notify_all();
  }

  std::atomic<int> begun{0}, admitted{0}, handled{0};
  std::mutex slow_mu;
  std::condition_variable slow_cv;
  int slow_waiting = 0;  // guarded by slow_mu
  bool slow_released = false;
  std::mutex mu;
  std::vector<std::thread> threads;
};

// One answer: its status and body.
struct Answer {
  int status = 0;
  std::string body;
};

// One keep-alive connection's requests to `path`, each head and body in one write (so the
// body arrives with its head, as Begin needs; a client that writes them apart may take
// the usual path, as it should): the answers, in order.
std::vector<Answer> Exchange(int port, const std::vector<std::string>& bodies,
                             const std::string& path = "/later") {
  std::vector<Answer> answers;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return answers;
  }
  std::string in;
  for (const std::string& body : bodies) {
    const std::string out = "POST " + path +
                            " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                            "Content-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
    if (send(fd, out.data(), out.size(), 0) != static_cast<ssize_t>(out.size())) break;
    // The answer's head, then Content-Length bytes of body.
    size_t end = std::string::npos;
    size_t length = 0;
    char buf[4096];
    while (end == std::string::npos || in.size() < end + 4 + length) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
      if (end == std::string::npos && (end = in.find("\r\n\r\n")) != std::string::npos) {
        const size_t at = in.find("Content-Length: ");
        length = at < end ? std::stoul(in.substr(at + 16)) : 0;
      }
    }
    if (end == std::string::npos || in.size() < end + 4 + length) break;
    answers.push_back(Answer{std::stoi(in.substr(9, 3)), in.substr(end + 4, length)});
    in.erase(0, end + 4 + length);
  }
  close(fd);
  return answers;
}

class HttpListenerBeginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpListener::Options options;
    options.handler_threads = 2;
    listener_ = std::make_unique<HttpListener>(handler_, options);
    auto port = listener_->Bind("127.0.0.1", 0);
    ASSERT_TRUE(port) << port.error().message;
    port_ = *port;
    thread_ = std::thread([this] { listener_->Run(); });
  }
  void TearDown() override {
    listener_->Stop();
    thread_.join();
    handler_.Join();
  }

  std::optional<Answer> Post(const std::string& path, const std::string& body) {
    std::vector<Answer> answers = Exchange(port_, {body}, path);
    if (answers.empty()) return std::nullopt;
    return answers.front();
  }

  BeginningHandler handler_;
  std::unique_ptr<HttpListener> listener_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(HttpListenerBeginTest, ARequestBeginTookIsAnsweredByLaterWithoutAdmitOrHandle) {
  auto r = Post("/later", "a");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  EXPECT_EQ(r->body, R"({"later":"a"})");
  EXPECT_EQ(handler_.begun, 1);
  EXPECT_EQ(handler_.admitted, 0);
  EXPECT_EQ(handler_.handled, 0);
}

TEST_F(HttpListenerBeginTest, LaterWithNothingSendsTheWholeRequestThroughAdmitAndHandle) {
  auto r = Post("/back", "the body");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"handled":"the body"})");
  EXPECT_EQ(handler_.begun, 1);  // not offered to Begin a second time
  EXPECT_EQ(handler_.admitted, 1);
  EXPECT_EQ(handler_.handled, 1);
}

TEST_F(HttpListenerBeginTest, ARequestBeginDeclinesTakesTheUsualPath) {
  auto r = Post("/usual", "b");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"handled":"b"})");
  EXPECT_EQ(handler_.admitted, 1);
}

TEST_F(HttpListenerBeginTest, ABeginThatThrowsIsAnswered500AndTheListenerGoesOn) {
  auto r = Post("/throw", "c");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(handler_.handled, 0);
  auto next = Post("/later", "d");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 202);
}

TEST_F(HttpListenerBeginTest, ASlowBeginOnEveryBeginThreadDelaysNoReadingAndNoHealth) {
  // As many slow validations as there are socket threads (2): were Begin run on them,
  // nothing more would be read until they finished.
  std::vector<std::thread> slow;
  std::atomic<int> accepted{0};
  for (int i = 0; i < 2; ++i) {
    slow.emplace_back([&] {
      if (auto a = Post("/slow", "x"); a && a->status == 202) ++accepted;
    });
  }
  const bool held = handler_.WaitSlow(2);
  EXPECT_TRUE(held);
  // Asked while both are still held (a read gives up after 5 s).
  const auto health = Post("/healthz", "");
  handler_.ReleaseSlow();
  for (auto& t : slow) t.join();
  ASSERT_TRUE(health.has_value()) << "/healthz went unanswered while Begin was busy";
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(accepted, 2);
}

TEST_F(HttpListenerBeginTest, ManyConnectionsAnsweredFromOtherThreadsEachGetTheirOwnAnswers) {
  std::vector<std::thread> clients;
  std::atomic<int> right{0};
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back([&, i] {
      std::vector<std::string> bodies;
      for (int j = 0; j < 5; ++j) bodies.push_back(std::to_string(i) + "-" + std::to_string(j));
      const std::vector<Answer> answers = Exchange(port_, bodies);
      for (size_t j = 0; j < answers.size(); ++j) {
        if (answers[j].status == 202 && answers[j].body == R"({"later":")" + bodies[j] + R"("})") {
          ++right;
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(right, 80);
  EXPECT_EQ(handler_.begun, 80);
  EXPECT_EQ(handler_.handled, 0);
}

}  // namespace
}  // namespace webhookd::http_listener_test
