/// The verification run: per-case generation (a RapidCheck generator at the case's seed and
/// size) and parallel execution on workers; each variant's first failure is shrunk by
/// shrink.cpp.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <thread>

#include "pagecheck/verify/check/determinism.h"
#include "verifier_internal.h"

namespace pagecheck::verify::check {

using namespace detail;

std::string Target::id() const {
  return registry + ":" + family_name(caps.family) + "/" + caps.name;
}

CaseParams case_params(const Target& target, uint64_t seed, int cases, int64_t index) {
  CaseParams p;
  p.index = index;
  p.rc_seed = mix64(seed ^ mix64(static_cast<uint64_t>(index) + 0x5eedull));
  if (cases >= 101) {
    p.size = static_cast<int>(index % 101);
  } else {
    p.size = cases <= 1 ? 50 : static_cast<int>(index * 100 / (cases - 1));
  }
  p.large = target.caps.has(PC_CAP_LARGE_CACHE) && index == cases - 1 && cases >= 2;
  return p;
}

std::string rc_test_id(const Target& target, const CaseParams& params) {
  return target.id() + "/size=" + std::to_string(params.size) +
         "/large=" + (params.large ? "1" : "0");
}

rc::Gen<gen::CaseSpec> case_generator(const Target& target, const CaseParams& params) {
  gen::GenOptions options;
  options.large = params.large ? gen::LargeCache::kAlways : gen::LargeCache::kNever;
  return rc::gen::resize(params.size, gen::case_spec(target.caps, options));
}

gen::CaseSpec generate_case(const Target& target, const CaseParams& params) {
  try {
    return case_generator(target, params)(rc::Random(params.rc_seed), params.size).value();
  } catch (const rc::GenerationFailure& e) {
    throw std::runtime_error("generating case " + std::to_string(params.index) + " of " +
                             target.id() + " failed: " + e.what());
  }
}

RunReport run_verification(const std::vector<Target>& targets, const VerifyOptions& o,
                           const ExecutorFactory& make_executor) {
  const auto run_start = Clock::now();
  RunReport report;
  report.seed = o.seed;
  report.cases = o.cases;
  report.shard_count = o.shard.count;
  report.shards = {o.shard.index};
  report.device = o.device;

  // Phase A: generate every case of this shard (cheap; specs only).
  std::vector<std::unique_ptr<TargetState>> states;
  const std::vector<int64_t> owned = o.shard.cases(o.cases);
  for (const Target& t : targets) {
    auto st = std::make_unique<TargetState>();
    st->caps = t.caps;
    st->report = empty_report(t, o);
    st->report.planned = static_cast<int64_t>(owned.size());
    if (const std::string refusal = precision_refusal(t.caps); !refusal.empty()) {
      // A declaration looser than pagecheck accepts would blind the comparison: no case runs.
      st->report.planned = 0;
      st->report.errors = 1;
      st->report.error_messages.push_back(refusal);
      states.push_back(std::move(st));
      continue;
    }
    for (int64_t index : owned) {
      const CaseParams params = case_params(t, o.seed, o.cases, index);
      st->params.push_back(params);
      st->specs.push_back(generate_case(t, params));
    }
    states.push_back(std::move(st));
  }

  // Phase B: run all cases on `jobs` executors, interleaving the variants; a variant stops
  // after its first failure (cases with a lower index still run, so that failure is the
  // lowest-index one whatever the timing).
  struct Task {
    std::size_t target, slot;
  };
  // Large-cache cases are the long poles: spread them over the first half of the queue, so
  // they start early without queueing behind each other for the large-case slots.
  std::vector<Task> small, large_tasks, tasks;
  for (std::size_t slot = 0; slot < owned.size(); ++slot) {
    for (std::size_t t = 0; t < targets.size(); ++t) {
      if (states[t]->params.empty()) continue;  // refused declaration
      (states[t]->params[slot].large ? large_tasks : small).push_back({t, slot});
    }
  }
  const std::size_t spacing =
      large_tasks.empty() ? 0 : std::max<std::size_t>(1, small.size() / (2 * large_tasks.size()));
  for (std::size_t i = 0, l = 0; i < small.size() || l < large_tasks.size();) {
    if (l < large_tasks.size() && (i >= l * spacing || i >= small.size())) {
      tasks.push_back(large_tasks[l++]);
    } else {
      tasks.push_back(small[i++]);
    }
  }
  const int jobs = std::max(1, o.jobs);
  std::vector<std::unique_ptr<CaseExecutor>> executors;
  for (int w = 0; w < jobs; ++w) executors.push_back(make_executor(w));
  // Per-device counts of a multi-device run (executor w runs on slot w mod devices).
  const std::size_t device_slots = o.devices.size() > 1 ? o.devices.size() : 0;
  std::vector<DeviceReport> per_device(device_slots);
  for (std::size_t d = 0; d < device_slots; ++d) {
    per_device[d].index = o.devices[d].index;
    per_device[d].description = o.devices[d].description;
  }
  std::mutex device_mutex;
  std::atomic<std::size_t> next{0}, done{0};
  std::atomic<int> running{jobs};
  std::mutex wake_mutex;
  std::condition_variable wake;
  // Multi-GiB cases hold two caches on the host (three for reshape_and_cache): at most
  // kMaxLargeAtOnce of them at a time, so a full run fits in the host's memory.
  constexpr int kMaxLargeAtOnce = 2;
  std::mutex large_mutex;
  std::condition_variable large_free;
  int large_running = 0;
  auto worker = [&](int w) {
    for (std::size_t k; (k = next.fetch_add(1)) < tasks.size();) {
      if (o.stop && o.stop()) {  // interrupted: leave the rest of the queue
        next.store(tasks.size());
        break;
      }
      const Task task = tasks[k];
      TargetState& st = *states[task.target];
      {
        std::lock_guard<std::mutex> lock(st.mutex);
        if (st.params[task.slot].index > st.first_fail) {
          ++done;
          continue;
        }
        if (!st.started) {
          st.started = true;
          st.start = Clock::now();
        }
      }
      const bool large = st.params[task.slot].large;
      if (large) {
        std::unique_lock<std::mutex> lock(large_mutex);
        large_free.wait(lock, [&] { return large_running < kMaxLargeAtOnce; });
        ++large_running;
      }
      const CaseResult r = executors[w]->run(
          make_request(targets[task.target], st.specs[task.slot], o,
                       checks_determinism(o.determinism_share, st.params[task.slot].index)));
      if (large) {
        std::lock_guard<std::mutex> lock(large_mutex);
        --large_running;
        large_free.notify_one();
      }
      {
        std::lock_guard<std::mutex> lock(st.mutex);
        record(st, task.slot, r);
      }
      if (device_slots > 0) {
        std::lock_guard<std::mutex> lock(device_mutex);
        per_device[device_slot_of(w, device_slots)].add(r);
      }
      ++done;
    }
    --running;
    wake.notify_all();
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < jobs; ++w) threads.emplace_back(worker, w);
  while (running.load() > 0) {
    std::unique_lock<std::mutex> lock(wake_mutex);
    wake.wait_for(lock, std::chrono::milliseconds(500));
    if (o.progress) {
      int failing = 0;
      for (auto& st : states) {
        std::lock_guard<std::mutex> l(st->mutex);
        failing += st->first_fail != std::numeric_limits<int64_t>::max() ? 1 : 0;
      }
      std::ostringstream os;
      const double elapsed = seconds_since(run_start);
      const std::size_t finished = done.load();
      os << "verify: " << finished << "/" << tasks.size() << " cases, " << failing
         << " variant(s) failing, " << static_cast<int>(elapsed) << " s elapsed";
      if (finished > 0 && finished < tasks.size()) {
        os << ", about "
           << static_cast<int>(elapsed * static_cast<double>(tasks.size() - finished) / finished)
           << " s left";
      }
      o.progress(os.str());
    }
  }
  for (auto& th : threads) th.join();

  report.interrupted = o.stop && o.stop();
  if (report.interrupted) {
    report.notes.push_back("interrupted: " + std::to_string(done.load()) + " of " +
                           std::to_string(tasks.size()) +
                           " cases done; counts are partial and nothing was shrunk");
  }
  // Phase C: shrink each variant's first failure (one executor, sequentially).
  for (std::size_t t = 0; t < targets.size() && !report.interrupted; ++t) {
    TargetState& st = *states[t];
    if (st.first_fail == std::numeric_limits<int64_t>::max()) continue;
    if (o.progress) o.progress("verify: shrinking the counterexample of " + targets[t].id());
    FailureInfo f =
        shrink_failure(targets[t], st.params[st.first_fail_slot], st.specs[st.first_fail_slot],
                       st.first_fail_result, *executors[0], o);
    f.seconds_to_find = st.seconds_to_find;
    st.report.failure = std::move(f);
  }
  if (o.progress) o.progress("");
  for (auto& st : states) report.variants.push_back(std::move(st->report));
  report.devices = std::move(per_device);
  report.wall_seconds = seconds_since(run_start);
  return report;
}

}  // namespace pagecheck::verify::check
