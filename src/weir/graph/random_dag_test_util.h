// Random DAGs of cheap float ops spread over devices, for tests of
// partitioning and Recv scheduling. Header-only; tests only.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "weir/base/str_util.h"
#include "weir/framework/node_def.h"
#include "weir/framework/tensor.h"

namespace weir {
namespace testing_dag {

inline std::string CpuName(int i) {
  return StrCat("/job:localhost/replica:0/task:0/device:CPU:", i);
}

struct RandomDag {
  GraphDef graph;
  std::vector<std::string> fetches;  // nodes nothing reads
  std::vector<std::string> targets;  // NoOps nothing reads
};

// `num_nodes` nodes over `num_devices` devices: Consts, then Neg, Add, Sub,
// Mul and NoOps reading random earlier nodes, some through control edges.
// Every tensor is float [elements].
inline RandomDag MakeRandomDag(uint32_t seed, int num_devices, int num_nodes, int64_t elements) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  RandomDag dag;
  std::vector<std::string> tensors;  // nodes with a float output
  std::vector<std::string> all;
  std::vector<int> readers;
  auto device = [&] { return StrCat("/device:CPU:", pick(num_devices)); };
  for (int i = 0; i < num_nodes; ++i) {
    NodeDef def;
    def.name = StrCat("n", i);
    def.device = device();
    const int kind = tensors.size() < 2 ? 0 : pick(10);
    if (kind == 0) {
      def.op = "Const";
      Tensor value(DT_FLOAT, TensorShape({elements}));
      for (int64_t k = 0; k < elements; ++k) {
        value.data<float>()[k] = static_cast<float>(pick(2000) - 1000) / 256.0f;
      }
      def.attrs["dtype"] = DT_FLOAT;
      def.attrs["value"] = value;
    } else if (kind == 9) {
      def.op = "NoOp";
    } else {
      static const char* const kOps[] = {"Neg", "Add", "Sub", "Mul"};
      def.op = kOps[pick(4)];
      def.attrs["T"] = DT_FLOAT;
      const int arity = def.op == "Neg" ? 1 : 2;
      for (int k = 0; k < arity; ++k) {
        // Mostly recent nodes, so paths get long.
        int j = static_cast<int>(tensors.size()) - 1 - pick(std::min<int>(6, tensors.size()));
        def.inputs.push_back(tensors[j]);
      }
    }
    int controls = def.op == "NoOp" ? 1 + pick(3) : (pick(4) == 0 ? 1 : 0);
    for (int k = 0; k < controls && !all.empty(); ++k) {
      std::string src = all[all.size() - 1 - pick(std::min<int>(8, all.size()))];
      bool duplicate = false;
      for (const std::string& in : def.inputs) duplicate |= in == "^" + src;
      if (!duplicate) def.inputs.push_back("^" + src);
    }
    for (const std::string& in : def.inputs) {
      std::string name = in[0] == '^' ? in.substr(1) : in;
      for (size_t k = 0; k < all.size(); ++k) {
        if (all[k] == name) ++readers[k];
      }
    }
    all.push_back(def.name);
    readers.push_back(0);
    if (def.op != "NoOp") tensors.push_back(def.name);
    dag.graph.nodes.push_back(std::move(def));
  }
  for (size_t k = 0; k < all.size(); ++k) {
    if (readers[k] > 0) continue;
    if (dag.graph.nodes[k].op == "NoOp") {
      dag.targets.push_back(all[k]);
    } else {
      dag.fetches.push_back(all[k]);
    }
  }
  return dag;
}

}  // namespace testing_dag
}  // namespace weir
