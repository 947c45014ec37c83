#pragma once

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace webhookd::testing {

// A DNS server on UDP for the tests that need the system's resolver (getaddrinfo, and
// libcurl's threaded resolver on it) to see scripted answers: each name in `answers`
// gets its IPv4 address (A) or an empty answer (any other type); each name in `silent`
// gets no answer at all, ever, like a name server that hangs; any other name is NXDOMAIN.
// Counts the queries it gets. A process reaches it through a resolv.conf naming its
// address (see ResolvConfFor).
class DnsServer {
 public:
  // Binds `address`:53 (needs root); bound() says whether that worked.
  DnsServer(std::string address, std::map<std::string, std::string> answers,
            std::set<std::string> silent);
  ~DnsServer();
  DnsServer(const DnsServer&) = delete;
  DnsServer& operator=(const DnsServer&) = delete;

  bool bound() const { return fd_ >= 0; }
  int queries() const { return queries_.load(); }

  // Writes a resolv.conf naming this server, waiting up to 30 s for an answer (glibc's
  // most), once; returns its path.
  std::string WriteResolvConf(const std::string& dir) const;

  // The argv prefix that runs a command in a mount namespace of its own where
  // /etc/resolv.conf is `resolv_conf`, so only that command asks this server.
  static std::vector<std::string> WithResolvConf(const std::string& resolv_conf);

 private:
  void Serve();

  std::string address_;
  std::map<std::string, std::string> answers_;
  std::set<std::string> silent_;
  int fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<int> queries_{0};
  std::thread thread_;
};

}  // namespace webhookd::testing
