#include "tests/testing/receiver.h"

#include <sys/socket.h>

#include <stdexcept>

namespace webhookd::testing {

Receiver::Receiver(Script script, const std::string& host)
    : host_(host), script_(std::move(script)) {
  server_.set_tcp_nodelay(true);
  server_.set_keep_alive_max_count(100000);
  server_.new_task_queue = [] { return new httplib::ThreadPool(32); };
  server_.Post(R"(.*)", [this](const httplib::Request& req, httplib::Response& res) {
    Received r{req.path, req.headers, req.body, std::chrono::steady_clock::now()};
    Script script;
    int nth = 0;
    {
      std::lock_guard lock(mu_);
      nth = static_cast<int>(requests_.size());
      requests_.push_back(r);
      script = script_;
    }
    cv_.notify_all();
    Answer answer = script ? script(r, nth) : Answer{};
    if (answer.delay.count() > 0) std::this_thread::sleep_for(answer.delay);
    res.status = answer.status;
    for (const auto& [k, v] : answer.headers) res.set_header(k, v);
    res.set_content(answer.body, "text/plain");
  });
  // cpp-httplib listens with a backlog of 5: a worker opening more connections at once
  // than that would see SYNs dropped and connects time out. Listen again with room.
  int listen_fd = -1;
  server_.set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd = sock;
  });
  port_ = server_.bind_to_any_port(host_);
  if (port_ <= 0) throw std::runtime_error("receiver cannot bind");
  if (listen_fd >= 0) ::listen(listen_fd, 1024);
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

Receiver::~Receiver() {
  server_.stop();
  thread_.join();
}

std::string Receiver::url(const std::string& path) const {
  const bool v6 = host_.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_) + path;
}

void Receiver::set_script(Script script) {
  std::lock_guard lock(mu_);
  script_ = std::move(script);
}

std::vector<Received> Receiver::requests() {
  std::lock_guard lock(mu_);
  return requests_;
}

size_t Receiver::count() {
  std::lock_guard lock(mu_);
  return requests_.size();
}

bool Receiver::WaitFor(size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return requests_.size() >= n; });
}

}  // namespace webhookd::testing
