#include "weir/graph/recv_schedule.h"

#include <algorithm>
#include <cmath>

#include "weir/framework/types.h"
#include "weir/graph/algorithm.h"
#include "weir/graph/op_kinds.h"

namespace weir {
namespace {

// Why the added control edges cannot deadlock a step.
//
// The partitioned graph P holds G's nodes and, per transfer of s:p to
// device D, the source-side helpers (the Const of a control transfer, the
// Cast of a lossy one), the _Send, the _Recv R and the destination-side
// Cast of a lossy one. Every node of P waits only for its in-edges, except
// R, which waits for its _Send: count that as an edge. (Queue-like ops,
// which wait on state, would break this: graphs holding one are skipped.)
// So a step deadlocks only if P plus the added edges has a cycle.
//
// Times are integers, every cost >= 1 ns and every transfer >= 0, so in the
// ALAP schedule alap_start(u) < alap_finish(u) <= alap_start(v) - xfer(u,v)
// for each edge u -> v of G. R must start by
//   r = min over its consumers v of alap_start(v) - xfer(s:p -> D),
// and alap_finish(s) <= r <= alap_start(v). Order P's nodes by the pairs
//   helper (alap_finish(s), 0) < _Send (alap_finish(s), 1) < R (r, 2)
//   < lossy widening Cast (r, 3),  and any node n of G: (alap_start(n), 4).
// Every edge of P goes up in this order (check each kind above), and so
// does each added edge c -> R, since we only pick c with alap_finish(c) <=
// r, hence alap_start(c) < r. No edge goes down, so there is no cycle, on
// one device or across several. The ALAP schedule also stays feasible with
// the added edges, so under the cost model the step takes no longer.

// One second per node or transfer: sums over any graph fit in int64.
constexpr int64_t kMaxNanos = 1'000'000'000;

int64_t ToNanos(double micros, int64_t at_least) {
  if (!(micros > 0)) return at_least;  // also NaN
  const double nanos = micros * 1000.0;
  if (nanos >= static_cast<double>(kMaxNanos)) return kMaxNanos;
  return std::max<int64_t>(at_least, std::llround(nanos));
}

double DefaultTransferMicros(const Node* src, int port, const std::string&, const std::string&) {
  if (port < 0) return 0;
  const int64_t elements = src->output_shape(port).num_elements();
  if (elements < 0) return 0;
  const double bytes = static_cast<double>(elements) * DTypeSize(src->output_type(port));
  return bytes / 1e4;  // 10 GB/s is 10^4 bytes per microsecond
}

// Ops whose nodes may wait on something other than their in-edges, or be
// dead or in a loop frame: the proof above does not cover them.
bool DefeatsScheduling(const Node* node) {
  const std::string& op = node->type_string();
  if (IsControlFlowOp(op)) return true;
  return op.find("Queue") != std::string::npos || op.find("Barrier") != std::string::npos;
}

}  // namespace

StatusOr<RecvSchedule> ScheduleRecvs(const Graph& graph, const RecvScheduleOptions& options,
                                     std::vector<std::string>* changes) {
  RecvSchedule schedule;
  for (const Node* node : graph.nodes()) {
    if (DefeatsScheduling(node)) {
      if (changes != nullptr) {
        changes->push_back(StrCat("Recvs left unscheduled: the graph holds ", node->Describe()));
      }
      return schedule;
    }
  }
  WEIR_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  auto node_micros = options.node_micros;
  if (!node_micros) node_micros = [](const Node*) { return 1.0; };
  auto transfer_micros = options.transfer_micros;
  if (!transfer_micros) transfer_micros = DefaultTransferMicros;

  const int ids = graph.num_node_ids();
  std::vector<int64_t> cost(ids, 0), asap_finish(ids, 0), alap_start(ids, 0), alap_finish(ids, 0);
  for (const Node* node : order) cost[node->id()] = ToNanos(node_micros(node), 1);
  std::map<TransferKey, int64_t> transfer_nanos;
  auto transfer = [&](const Edge* e) -> int64_t {
    const Node* src = e->src();
    const std::string& dst_device = e->dst()->assigned_device();
    if (src->assigned_device() == dst_device) return 0;
    TransferKey key{src->id(), e->src_output(), dst_device};
    auto it = transfer_nanos.find(key);
    if (it != transfer_nanos.end()) return it->second;
    int64_t nanos =
        ToNanos(transfer_micros(src, e->src_output(), src->assigned_device(), dst_device), 0);
    transfer_nanos.emplace(std::move(key), nanos);
    return nanos;
  };

  int64_t makespan = 0;
  for (const Node* node : order) {
    int64_t start = 0;
    for (const Edge* e : node->in_edges()) {
      start = std::max(start, asap_finish[e->src()->id()] + transfer(e));
    }
    asap_finish[node->id()] = start + cost[node->id()];
    makespan = std::max(makespan, asap_finish[node->id()]);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node* node = *it;
    int64_t finish = makespan;
    for (const Edge* e : node->out_edges()) {
      finish = std::min(finish, alap_start[e->dst()->id()] - transfer(e));
    }
    alap_finish[node->id()] = finish;
    alap_start[node->id()] = finish - cost[node->id()];
  }

  // The latest start of each data transfer's _Recv: one per tensor and
  // destination device, as the partitioner makes them.
  std::map<TransferKey, int64_t> recv_start;
  for (const Node* src : order) {
    for (const Edge* e : src->out_edges()) {
      const std::string& dst_device = e->dst()->assigned_device();
      if (e->IsControlEdge() || dst_device == src->assigned_device()) continue;
      TransferKey key{src->id(), e->src_output(), dst_device};
      int64_t start = alap_start[e->dst()->id()] - transfer(e);
      auto [it, inserted] = recv_start.emplace(key, start);
      if (!inserted) it->second = std::min(it->second, start);
    }
  }

  // Per device, its nodes by ALAP finish, with the running best candidate:
  // the latest ASAP finish (what the executor will see), then ALAP finish.
  struct Candidates {
    std::vector<const Node*> by_alap_finish;
    std::vector<const Node*> best_prefix;
  };
  std::map<std::string, Candidates> per_device;
  for (const Node* node : order) per_device[node->assigned_device()].by_alap_finish.push_back(node);
  auto later = [&](const Node* a, const Node* b) {  // a preferred over b
    if (asap_finish[a->id()] != asap_finish[b->id()]) {
      return asap_finish[a->id()] > asap_finish[b->id()];
    }
    if (alap_finish[a->id()] != alap_finish[b->id()]) {
      return alap_finish[a->id()] > alap_finish[b->id()];
    }
    return a->id() < b->id();
  };
  for (auto& [device, candidates] : per_device) {
    std::vector<const Node*>& nodes = candidates.by_alap_finish;
    std::sort(nodes.begin(), nodes.end(), [&](const Node* a, const Node* b) {
      return alap_finish[a->id()] != alap_finish[b->id()]
                 ? alap_finish[a->id()] < alap_finish[b->id()]
                 : a->id() < b->id();
    });
    candidates.best_prefix.reserve(nodes.size());
    for (const Node* node : nodes) {
      const Node* best = candidates.best_prefix.empty() ? node : candidates.best_prefix.back();
      candidates.best_prefix.push_back(later(node, best) ? node : best);
    }
  }

  constexpr int kMaxChangeLines = 50;
  int listed = 0, unlisted = 0;
  for (const auto& [key, start] : recv_start) {
    const auto& [src_id, port, dst_device] = key;
    const Candidates& candidates = per_device[dst_device];
    auto end =
        std::upper_bound(candidates.by_alap_finish.begin(), candidates.by_alap_finish.end(), start,
                         [&](int64_t t, const Node* node) { return t < alap_finish[node->id()]; });
    if (end == candidates.by_alap_finish.begin()) continue;
    const Node* after = candidates.best_prefix[end - candidates.by_alap_finish.begin() - 1];
    // The _Recv could start when its source finishes; waiting for `after`
    // helps only if `after` finishes later than that.
    if (asap_finish[after->id()] <= asap_finish[src_id]) continue;
    schedule.start_after.emplace(key, after);
    if (changes == nullptr) continue;
    if (listed < kMaxChangeLines) {
      ++listed;
      changes->push_back(StrCat(
          "_Recv of ", graph.FindNodeId(src_id)->name(), ":", port, " on ", dst_device,
          " starts after '", after->name(), "' (est. ", asap_finish[after->id()] / 1000,
          " us instead of ", asap_finish[src_id] / 1000, " us; needed by ", start / 1000, " us)"));
    } else {
      ++unlisted;
    }
  }
  if (changes != nullptr && unlisted > 0) changes->push_back(StrCat("... and ", unlisted, " more"));
  return schedule;
}

}  // namespace weir
