#include "tests/testing/test_pki.h"

#include <stdlib.h>

#include <cstdlib>
#include <stdexcept>

#include "tests/testing/process.h"

namespace webhookd::testing {

TestPki::TestPki() {
  char dir[] = "/tmp/webhookd-pki-XXXXXX";
  if (::mkdtemp(dir) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = dir;
  const std::string script = "set -e; cd '" + dir_ + R"(';
    ca() { openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=$1" \
             -keyout "$1.key" -out "$1.pem" 2>/dev/null; }
    leaf() {  # name ca extensions
      openssl req -newkey rsa:2048 -nodes -subj "/CN=$1" -keyout "$1.key" -out "$1.csr" 2>/dev/null
      printf '%s\n' "$3" > "$1.ext"
      openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 30 \
              -extfile "$1.ext" -out "$1.pem" 2>/dev/null
    }
    ca ca; ca other_ca
    leaf server ca "subjectAltName=IP:127.0.0.1,DNS:localhost"
    leaf client ca "extendedKeyUsage=clientAuth"
    leaf other_client other_ca "extendedKeyUsage=clientAuth"
  )";
  // Run the script through a file: quoting it for bash -c is error-prone.
  const std::string file = dir_ + "/make.sh";
  FILE* f = std::fopen(file.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot write " + file);
  std::fputs(script.c_str(), f);
  std::fclose(f);
  if (std::system(("bash '" + file + "'").c_str()) != 0) {
    throw std::runtime_error("openssl could not make the test certificates in " + dir_);
  }
}

TestPki::~TestPki() { std::system(("rm -rf '" + dir_ + "'").c_str()); }

std::string TestPki::Pem(const std::string& name) const { return ReadFile(Path(name)); }

}  // namespace webhookd::testing
