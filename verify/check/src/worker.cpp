/// Worker process: JSON-lines request loop around run_case / replay_artifact.
#include "pagecheck/verify/check/worker.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ext/stdio_filebuf.h>
#include <iostream>
#include <string>

#include "pagecheck/verify/check/case_runner.h"

namespace pagecheck::verify::check {
namespace {

nlohmann::json hello(const std::vector<CaseBackend*>& backends) {
  nlohmann::json variants = nlohmann::json::array();
  bool available = false, gpu = false;
  int device_count = 0;
  std::string reasons, device;
  for (CaseBackend* b : backends) {
    std::string reason;
    const bool ok = b->available(&reason);
    device_count = std::max(device_count, b->device_count());
    if (ok) {
      available = true;
      gpu = gpu || !b->is_simulation();
      if (device.empty() || !b->is_simulation()) device = b->description();
    } else {
      reasons += (reasons.empty() ? "" : "; ") + reason;
    }
    for (const BackendVariant& v : b->variants()) {
      nlohmann::json caps = v.caps;
      variants.push_back({{"registry", v.registry},
                          {"caps", caps},
                          {"description", v.description},
                          {"runnable", ok}});
    }
  }
  return {{"available", available}, {"gpu_available", gpu},         {"reason", reasons},
          {"device", device},       {"device_count", device_count}, {"variants", variants}};
}

}  // namespace

int serve_worker(std::istream& in, std::ostream& out, const std::vector<CaseBackend*>& backends) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json reply;
    bool restart = false;
    try {
      const nlohmann::json msg = nlohmann::json::parse(line);
      const std::string op = msg.at("op").get<std::string>();
      if (op == "quit") return 0;
      if (op == "hello") {
        reply = hello(backends);
      } else if (op == "run") {
        const CaseResult r = run_case(backends, msg.at("request").get<CaseRequest>());
        restart = r.restart;
        reply = r;
      } else if (op == "replay") {
        try {
          const CaseResult r = replay_artifact(backends, msg.at("file").get<std::string>(),
                                               msg.value("ref_threads", 0));
          restart = r.restart;
          reply = r;
        } catch (const std::invalid_argument& e) {
          CaseResult r;
          r.outcome = Outcome::kError;
          r.message = e.what();
          reply = r;
          reply["bad_input"] = true;
        }
      } else {
        reply = {{"outcome", "error"}, {"message", "unknown op '" + op + "'"}};
      }
    } catch (const std::exception& e) {
      reply = {{"outcome", "error"}, {"message", std::string("malformed request: ") + e.what()}};
      out << reply.dump() << std::endl;
      return 2;
    }
    out << reply.dump() << std::endl;
    if (restart) return 0;  // the context is unusable: the parent starts a fresh worker
  }
  return 0;
}

int worker_main(const std::vector<CaseBackend*>& backends) {
  std::fflush(stdout);
  const int protocol_fd = dup(STDOUT_FILENO);
  if (protocol_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("pagecheck worker: cannot redirect stdout");
    return 3;
  }
  __gnu_cxx::stdio_filebuf<char> buffer(protocol_fd, std::ios::out);
  std::ostream protocol(&buffer);
  std::cout.rdbuf(std::cerr.rdbuf());  // C++ prints go to stderr too
  return serve_worker(std::cin, protocol, backends);
}

}  // namespace pagecheck::verify::check
