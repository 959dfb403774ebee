/// Multi-device runs on CPU simulations (issue 19): device lists, a run over two devices whose
/// merged counts equal a one-device run's case for case, a faulting device that fails its own
/// cases without ending the run, per-device counts through JSON and merges, and merges that
/// refuse shards of another run naming the report and the field.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <tuple>

#include "pagecheck/verify/check/ctest_resources.h"
#include "pagecheck/verify/check/device_worker.h"
#include "pagecheck/verify/check/executor.h"
#include "pagecheck/verify/check/report.h"
#include "pagecheck/verify/check/sim_backend.h"
#include "pagecheck/verify/check/verifier.h"

namespace pagecheck::verify {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(DeviceList, AllAndExplicitListsAreChecked) {
  EXPECT_EQ(check::parse_device_list("all", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(check::parse_device_list("2,0", 3), (std::vector<int>{2, 0}));
  EXPECT_EQ(check::parse_device_list("0", 1), (std::vector<int>{0}));
  EXPECT_NE(message_of([] { check::parse_device_list("all", 0); }).find("no CUDA device"),
            std::string::npos);
  EXPECT_NE(message_of([] { check::parse_device_list("0,3", 3); }).find("device 3 is out of range"),
            std::string::npos);
  EXPECT_NE(message_of([] { check::parse_device_list("1,1", 3); }).find("listed twice"),
            std::string::npos);
  for (const char* bad : {"", ",", "0,", "a", "-1", "0;1", "99999"}) {
    EXPECT_NE(message_of([&] { check::parse_device_list(bad, 3); }).find("--devices"),
              std::string::npos)
        << bad;
  }
  EXPECT_EQ(check::device_slot_of(5, 2), 1u);
  EXPECT_EQ(check::device_slot_of(4, 2), 0u);
}

/// Executors over simulated devices. Each device's first case waits (up to 10 s) until every
/// device has started one, so every device runs cases whatever the scheduling; a device listed
/// in `faulty` answers every case with a sticky fault, as a broken GPU would.
class SimDevices {
 public:
  SimDevices(int devices, std::vector<int> faulty)
      : backend_(check::make_sim_backend(false)), devices_(devices), faulty_(std::move(faulty)) {}

  check::ExecutorFactory factory() {
    return [this](int worker) -> std::unique_ptr<check::CaseExecutor> {
      const int device = static_cast<int>(check::device_slot_of(worker, devices_));
      const bool faulty = std::find(faulty_.begin(), faulty_.end(), device) != faulty_.end();
      return std::make_unique<Executor>(*this, faulty);
    };
  }
  check::Target target(const std::string& name) const {
    for (const auto& v : backend_->variants()) {
      if (v.caps.name == name) return check::Target{v.registry, v.caps};
    }
    throw std::logic_error("no sim variant " + name);
  }

 private:
  class Executor final : public check::CaseExecutor {
   public:
    Executor(SimDevices& owner, bool faulty)
        : owner_(owner), faulty_(faulty), inline_({owner.backend_.get()}) {}
    check::CaseResult run(const check::CaseRequest& request) override {
      if (first_) {
        first_ = false;
        std::unique_lock<std::mutex> lock(owner_.mutex_);
        ++owner_.started_;
        owner_.all_started_.notify_all();
        owner_.all_started_.wait_for(lock, std::chrono::seconds(10),
                                     [&] { return owner_.started_ >= owner_.devices_; });
      }
      if (!faulty_) return inline_.run(request);
      check::CaseResult r;
      r.outcome = check::Outcome::kFault;
      r.message = "simulated sticky error (cudaErrorIllegalAddress)";
      r.restart = true;
      return r;
    }
    check::CaseResult replay(const std::string& path, int ref_threads) override {
      return inline_.replay(path, ref_threads);
    }
    nlohmann::json hello() override { return inline_.hello(); }

   private:
    SimDevices& owner_;
    bool faulty_;
    bool first_ = true;
    check::InlineExecutor inline_;
  };

  std::unique_ptr<check::CaseBackend> backend_;
  int devices_;
  std::vector<int> faulty_;
  std::mutex mutex_;
  std::condition_variable all_started_;
  int started_ = 0;
};

check::VerifyOptions options(int jobs, int devices) {
  check::VerifyOptions o;
  o.cases = 40;
  o.seed = 23;
  o.jobs = jobs;
  o.ref_threads = 1;
  o.shrink_budget_s = 20;
  for (int d = 0; d < devices; ++d) o.devices.push_back({d, "sim device " + std::to_string(d)});
  return o;
}

void expect_same_cases(const check::RunReport& a, const check::RunReport& b) {
  ASSERT_EQ(a.variants.size(), b.variants.size());
  for (std::size_t i = 0; i < a.variants.size(); ++i) {
    const check::VariantReport &x = a.variants[i], &y = b.variants[i];
    SCOPED_TRACE(x.variant);
    EXPECT_EQ(
        std::tie(x.run, x.passed, x.failed, x.regimes, x.tags, x.outcomes, x.max_ratio, x.max_abs),
        std::tie(y.run, y.passed, y.failed, y.regimes, y.tags, y.outcomes, y.max_ratio, y.max_abs));
  }
}

TEST(MultiDevice, MergedCountsEqualAOneDeviceRunAndEachDeviceCounts) {
  SimDevices one(1, {}), three(3, {});
  const std::vector<check::Target> targets{one.target("sim_reference"),
                                           one.target("sim_gather_reference"),
                                           one.target("sim_reshape_reference")};
  const check::RunReport single = check::run_verification(targets, options(1, 0), one.factory());
  const check::RunReport spread = check::run_verification(targets, options(3, 3), three.factory());
  EXPECT_TRUE(single.devices.empty());
  expect_same_cases(single, spread);
  ASSERT_EQ(spread.devices.size(), 3u);
  int64_t cases = 0, ran = 0;
  for (const auto& d : spread.devices) {
    EXPECT_GT(d.cases, 0) << d.description;
    EXPECT_EQ(d.passed, d.cases) << d.description;
    cases += d.cases;
  }
  for (const auto& v : spread.variants) ran += v.run;
  EXPECT_EQ(cases, ran);
  EXPECT_EQ(spread.exit_code(), 0);
  // Through JSON, as `verify merge` reads it; two shards' device counts add.
  const auto back = nlohmann::json::parse(nlohmann::json(spread).dump()).get<check::RunReport>();
  ASSERT_EQ(back.devices.size(), 3u);
  EXPECT_EQ(back.devices[1].cases, spread.devices[1].cases);
  EXPECT_EQ(back.devices[2].description, "sim device 2");
}

TEST(MultiDevice, AFaultingDeviceFailsItsCasesNotTheRun) {
  SimDevices devices(2, {1});
  const check::RunReport r =
      check::run_verification({devices.target("sim_reference")}, options(2, 2), devices.factory());
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].failed, 0);
  EXPECT_GT(r.devices[0].passed, 0);  // device 0 went on running cases
  EXPECT_GT(r.devices[1].faults, 0);
  EXPECT_EQ(r.devices[1].faults, r.devices[1].failed);
  const check::VariantReport& v = r.variants.at(0);
  ASSERT_TRUE(v.failure.has_value());  // the faulted case is the variant's counterexample
  EXPECT_EQ(r.exit_code(), 1);
  // Shrinking ran on executor 0 (device 0), where the case passes: reported as flaky.
  EXPECT_FALSE(v.failure->reproduced);
}

check::RunReport shard_report(uint64_t seed, int cases, const std::string& version) {
  check::RunReport r;
  r.seed = seed;
  r.cases = cases;
  r.shard_count = 2;
  r.shards = {0};
  r.tool_version = version;
  r.devices = {{0, "GPU A", 5, 5, 0, 0, 0, 0, 1.0}};
  return r;
}

TEST(MergeChecks, ShardsOfAnotherRunAreRefusedNamingTheFileAndField) {
  const check::RunReport a = shard_report(1, 10, "pagecheck 0.1.0");
  check::RunReport b = shard_report(1, 10, "pagecheck 0.1.0");
  b.shards = {1};
  b.devices = {{0, "GPU A", 4, 3, 1, 1, 0, 0, 2.0}, {1, "GPU B", 1, 1, 0, 0, 0, 0, 0.5}};
  const check::RunReport merged = check::merge_reports({a, b}, {"a.json", "b.json"});
  ASSERT_EQ(merged.devices.size(), 2u);
  EXPECT_EQ(merged.devices[0].cases, 9);
  EXPECT_EQ(merged.devices[0].faults, 1);
  EXPECT_EQ(merged.devices[1].description, "GPU B");
  EXPECT_EQ(merged.tool_version, "pagecheck 0.1.0");

  auto refusal = [&](check::RunReport other) {
    other.shards = {1};
    return message_of([&] { check::merge_reports({a, other}, {"a.json", "b.json"}); });
  };
  EXPECT_NE(refusal(shard_report(2, 10, "pagecheck 0.1.0"))
                .find("'b.json': field 'seed' is 2, but 'a.json' has 1"),
            std::string::npos);
  EXPECT_NE(refusal(shard_report(1, 11, "pagecheck 0.1.0"))
                .find("'b.json': field 'cases' is 11, but 'a.json' has 10"),
            std::string::npos);
  EXPECT_NE(refusal(shard_report(1, 10, "pagecheck 0.2.0"))
                .find("field 'tool_version' is 'pagecheck 0.2.0', but 'a.json' has "
                      "'pagecheck 0.1.0'"),
            std::string::npos);
  EXPECT_NE(refusal(shard_report(1, 10, "")).find("field 'tool_version' is (none)"),
            std::string::npos);
  check::RunReport counted = shard_report(1, 10, "pagecheck 0.1.0");
  counted.shard_count = 3;
  EXPECT_NE(refusal(counted).find("field 'shard_count' is 3"), std::string::npos);
  // Without names the reports are numbered.
  EXPECT_NE(message_of([&] {
              check::merge_reports({a, shard_report(2, 10, "pagecheck 0.1.0")});
            }).find("report 2: field 'seed'"),
            std::string::npos);
}

TEST(MergeChecks, ReportsNoRunCouldWriteAreRefusedOnRead) {
  check::RunReport good = shard_report(1, 10, "pagecheck 0.1.0");
  check::VariantReport v;
  v.registry = "builtin";
  v.family = "gather_cached_kv";
  v.variant = "naive";
  v.planned = 5;
  v.run = 5;
  v.passed = 5;
  v.regimes = {{"bits", 5}};
  v.shards = {0};
  good.variants = {v};
  const nlohmann::json j = good;
  EXPECT_NO_THROW(j.get<check::RunReport>());
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> edits = {
      {[](nlohmann::json& r) { r["shards"] = {7}; }, "shard 7 is not in [0, shard_count 2)"},
      {[](nlohmann::json& r) { r["shards"] = {-1}; }, "shard -1 is not in"},
      {[](nlohmann::json& r) {
         r["shards"] = {0, 0};
       },
       "shard 0 is listed twice"},
      {[](nlohmann::json& r) { r["shard_count"] = 0; }, "'shard_count' must be at least 1"},
      {[](nlohmann::json& r) { r["seed"] = "abc"; }, "field 'seed' 'abc'"},
      {[](nlohmann::json& r) { r["seed"] = "-1"; }, "field 'seed' '-1'"},
      {[](nlohmann::json& r) { r["variants"][0]["failed"] = -5; },
       "variant 'naive': field 'failed' is negative"},
      {[](nlohmann::json& r) { r["variants"][0]["passed"] = 1000; },
       "= 1000 is more than the 5 cases run"},
      {[](nlohmann::json& r) { r["variants"][0]["run"] = 6; }, "exceeds what was planned"},
      {[](nlohmann::json& r) { r["variants"][0]["run"] = 4.5; }, "field 'run' must be an integer"},
      {[](nlohmann::json& r) { r["variants"][0]["regimes"]["bits"] = -89; },
       "field 'regimes' counts -89 cases for 'bits'"},
      {[](nlohmann::json& r) { r["variants"][0]["family"] = "bogus"; },
       "variant 'naive': unknown kernel family 'bogus'"},
      {[](nlohmann::json& r) { r["variants"][0]["max_ratio"] = "bogus"; }, "'bogus' is neither"},
      {[](nlohmann::json& r) { r["variants"][0]["shards"] = {1}; },
       "shard 1 is not among the report's shards"},
  };
  for (const auto& [edit, words] : edits) {
    nlohmann::json bad = j;
    edit(bad);
    EXPECT_NE(message_of([&] { (void)bad.get<check::RunReport>(); }).find(words), std::string::npos)
        << words << " in: " << message_of([&] { (void)bad.get<check::RunReport>(); });
  }
}

TEST(CTestResources, TheAllocatedGpuBecomesTheOnlyVisibleDevice) {
  std::map<std::string, std::string> env;
  auto lookup = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_FALSE(check::ctest_allocated_gpu(lookup).has_value());  // plain ctest: nothing
  env = {{"CTEST_RESOURCE_GROUP_COUNT", "1"},
         {"CTEST_RESOURCE_GROUP_0", "gpus"},
         {"CTEST_RESOURCE_GROUP_0_GPUS", "id:3,slots:1"}};
  EXPECT_EQ(check::ctest_allocated_gpu(lookup), "3");
  env["CTEST_RESOURCE_GROUP_0_GPUS"] = "slots:1,id:12;id:4,slots:1";
  EXPECT_EQ(check::ctest_allocated_gpu(lookup), "12");
  for (const char* bad : {"", "slots:1", "id:,slots:1", "id:x,slots:1", "id:-1"}) {
    env["CTEST_RESOURCE_GROUP_0_GPUS"] = bad;
    EXPECT_NE(
        message_of([&] { check::ctest_allocated_gpu(lookup); }).find("CTEST_RESOURCE_GROUP_0_GPUS"),
        std::string::npos)
        << bad;
  }
  env["CTEST_RESOURCE_GROUP_0"] = "crypto_chips";
  EXPECT_NE(message_of([&] { check::ctest_allocated_gpu(lookup); }).find("no 'gpus'"),
            std::string::npos);
  EXPECT_EQ(check::visible_devices_for("1", nullptr), "1");
  EXPECT_EQ(check::visible_devices_for("1", ""), "1");
  EXPECT_EQ(check::visible_devices_for("1", "2,3"), "3");
  EXPECT_EQ(check::visible_devices_for("0", "GPU-5f2a,GPU-77b1"), "GPU-5f2a");
  EXPECT_THROW(check::visible_devices_for("2", "2,3"), std::invalid_argument);
}

#ifdef PAGECHECK_SIM_WORKER
TEST(MultiDevice, DeviceSessionsStartAWorkerPerDeviceAndDealExecutors) {
  check::WorkerOptions wo;
  wo.simulate = true;  // the sim worker serves the simulations whatever --device says
  check::DeviceSessions sessions(PAGECHECK_SIM_WORKER, wo, {0, 1}, 60);
  ASSERT_EQ(sessions.devices().size(), 2u);
  EXPECT_TRUE(sessions.dropped().empty());
  EXPECT_EQ(sessions.devices()[1].index, 1);
  SimDevices names(1, {});
  check::VerifyOptions o = options(2, 0);
  o.devices = sessions.devices();
  const check::RunReport r =
      check::run_verification({names.target("sim_reference")}, o, sessions.factory());
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].cases + r.devices[1].cases, r.variants.at(0).run);
  EXPECT_EQ(r.exit_code(), 0);
  // A worker that cannot start leaves its device out instead of failing the run.
  check::DeviceSessions broken("/nonexistent/pagecheck-worker", wo, {0}, 5);
  EXPECT_TRUE(broken.empty());
  ASSERT_EQ(broken.dropped().size(), 1u);
  EXPECT_NE(broken.dropped()[0].find("device 0 left out"), std::string::npos);
}
#endif

}  // namespace
}  // namespace pagecheck::verify
