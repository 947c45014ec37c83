// Helpers shared by the benchmark tools: flag parsing and the HTTP server settings.
#ifndef WEBHOOKD_BENCH_BENCH_UTIL_H_
#define WEBHOOKD_BENCH_BENCH_UTIL_H_

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace webhookd::bench {

class Flags {
 public:
  // Parses argv as "--name value" pairs; exits 2 on anything else.
  Flags(int argc, char** argv, const char* usage) : usage_(usage) {
    for (int i = 1; i < argc; ++i) {
      const std::string name = argv[i];
      if (name == "--help" || name == "-h") {
        std::fputs(usage, stdout);
        std::exit(0);
      }
      if (!name.starts_with("--") || i + 1 >= argc) Die("bad argument " + name);
      values_[name.substr(2)] = argv[++i];
    }
  }

  std::string Str(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }

  double Num(const std::string& name, double fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0') Die("--" + name + ": expected a number");
    return v;
  }

 private:
  [[noreturn]] void Die(const std::string& message) const {
    std::fprintf(stderr, "%s\n%s", message.c_str(), usage_);
    std::exit(2);
  }

  const char* usage_;
  std::map<std::string, std::string> values_;
};

// The settings webhookd's API server uses (server/http_server.cc), so that a bound
// measured with them is a fair ceiling for webhookd.
inline void ConfigureLikeWebhookd(httplib::Server& http, int threads, size_t max_payload) {
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(100000);
  http.set_keep_alive_timeout(30);
  http.set_read_timeout(10);
  http.set_write_timeout(10);
  http.set_payload_max_length(max_payload);
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
}

// Debian's cpp-httplib 0.11 listens with a backlog of 5, compiled in: 64 clients that
// connect at once overflow it. Calling listen() again on the listening socket of `port`
// sets a bigger backlog. Returns false if no such socket was found.
inline bool RaiseListenBacklog(int port, int backlog) {
  for (int fd = 3; fd < 1024; ++fd) {
    int listening = 0;
    socklen_t len = sizeof listening;
    sockaddr_in addr{};
    socklen_t addr_len = sizeof addr;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len) == 0 &&
        addr.sin_family == AF_INET && ntohs(addr.sin_port) == port) {
      return listen(fd, backlog) == 0;
    }
  }
  return false;
}

// Binds 127.0.0.1:`port` (0 picks a free one), sets the listen backlog unless it is 0
// (0 keeps cpp-httplib's 5, as webhookd has it), prints "listening on 127.0.0.1:PORT" and
// serves until the process is killed. Returns 1 if it cannot bind.
inline int ListenAndServe(httplib::Server& http, int port, int backlog) {
  const int bound = port == 0 ? http.bind_to_any_port("127.0.0.1")
                              : (http.bind_to_port("127.0.0.1", port) ? port : -1);
  if (bound < 0) {
    std::fprintf(stderr, "cannot listen on 127.0.0.1:%d\n", port);
    return 1;
  }
  if (backlog > 0 && !RaiseListenBacklog(bound, backlog)) {
    std::fprintf(stderr, "cannot set the listen backlog to %d\n", backlog);
    return 1;
  }
  std::printf("listening on 127.0.0.1:%d\n", bound);
  std::fflush(stdout);
  return http.listen_after_bind() ? 0 : 1;
}

}  // namespace webhookd::bench

#endif  // WEBHOOKD_BENCH_BENCH_UTIL_H_
