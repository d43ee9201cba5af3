#include "weir/train/gradients.h"

#include <deque>
#include <map>
#include <set>

#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

using TensorKey = std::pair<int, int>;  // (node id, output index)

// Ones shaped like `y`: the default seed.
Output OnesLike(const Scope& scope, const Output& y) {
  // y * 0 + 1 keeps y's dtype and (dynamic) shape with ops every dtype has.
  return ops::Add(scope, ops::Mul(scope, y, 0.0), 1.0);
}

Output AsInt32(const Scope& scope, const Output& t) {
  return t.dtype() == DT_INT32 ? t : ops::Cast(scope, t, DT_INT32);
}

// The dense tensor a gradient stands for: rows scatter-added (ScatterNd
// adds repeated indices) into zeros of the dense shape.
Output Densify(const Scope& scope, const Gradient& g) {
  if (!g.is_sparse) return g.dense;
  const IndexedSlices& s = g.sparse;
  Output shape = AsInt32(scope, s.dense_shape);
  return ops::ScatterNd(scope, ops::Reshape(scope, AsInt32(scope, s.indices), {-1, 1}), s.values, shape);
}

// The sum of partial gradients, in a fixed order: sparse when every part
// is (their rows concatenated), else dense.
Gradient SumPartials(const Scope& scope, const std::vector<Gradient>& partials) {
  if (partials.size() == 1) return partials[0];
  bool all_sparse = true;
  for (const Gradient& g : partials) all_sparse &= g.is_sparse;
  if (all_sparse) {
    InputList values, indices;
    for (const Gradient& g : partials) {
      values.push_back(g.sparse.values);
      indices.push_back(AsInt32(scope, g.sparse.indices));
    }
    return Gradient::Sparse({ops::ConcatV2(scope, values, 0), ops::ConcatV2(scope, indices, 0),
                             partials[0].sparse.dense_shape});
  }
  Output sum = Densify(scope, partials[0]);
  for (size_t i = 1; i < partials.size(); ++i) sum = ops::AddV2(scope, sum, Densify(scope, partials[i]));
  return Gradient::Dense(sum);
}

// Calls the op's gradient functions: the sparse one first where the op has
// one and it applies, the dense one otherwise.
Status CallGradientFunction(const Scope& scope, Node* node, const std::vector<Output>& grad_outputs,
                            const GradientFunction& dense, std::vector<Gradient>* grad_inputs) {
  grad_inputs->assign(node->num_inputs(), Gradient());
  if (const SparseGradientFunction* sparse = GradientRegistry::Global()->LookupSparse(node->type_string())) {
    std::vector<IndexedSlices> rows;
    WEIR_RETURN_IF_ERROR((*sparse)(scope, Operation(node), grad_outputs, &rows));
    if (!rows.empty()) {
      if (static_cast<int>(rows.size()) != node->num_inputs()) {
        return errors::Internal("sparse gradient function of ", node->type_string(), " returned ",
                                rows.size(), " gradients for ", node->num_inputs(), " inputs");
      }
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].values.valid()) {
          (*grad_inputs)[i] = Gradient::Sparse(rows[i]);
        }
      }
      return Status::OK();
    }
  }
  std::vector<Output> dense_inputs(node->num_inputs());
  WEIR_RETURN_IF_ERROR(dense(scope, Operation(node), grad_outputs, &dense_inputs));
  if (static_cast<int>(dense_inputs.size()) != node->num_inputs()) {
    return errors::Internal("gradient function of ", node->type_string(), " returned ",
                            dense_inputs.size(), " gradients for ", node->num_inputs(), " inputs");
  }
  for (size_t i = 0; i < dense_inputs.size(); ++i) {
    if (dense_inputs[i].valid()) (*grad_inputs)[i] = Gradient::Dense(dense_inputs[i]);
  }
  return Status::OK();
}

}  // namespace

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            std::vector<Gradient>* grad_xs) {
  RegisterAllGradients();
  WEIR_RETURN_IF_ERROR(scope.status());
  if (!grad_ys.empty() && grad_ys.size() != ys.size()) {
    return errors::InvalidArgument("AddSymbolicGradients: ", ys.size(), " ys but ",
                                   grad_ys.size(), " grad_ys");
  }
  for (const Output& x : xs) {
    if (!x.valid()) return errors::InvalidArgument("AddSymbolicGradients: an x is invalid");
    // A resource x is a variable's handle: the gradient of its value.
    if (!IsFloatingDType(x.dtype()) && !IsComplexDType(x.dtype()) && x.dtype() != DT_RESOURCE) {
      return errors::InvalidArgument("cannot differentiate with respect to '", x.name(),
                                     "': its dtype ", x.dtype(), " is not a floating type");
    }
  }
  Graph* graph = scope.graph();
  // Nodes reachable forward from xs, then those of them from which ys are
  // reachable backward: the only nodes gradients pass through.
  std::vector<bool> from_x(graph->num_node_ids(), false);
  std::deque<Node*> queue;
  for (const Output& x : xs) {
    if (!from_x[x.node()->id()]) {
      from_x[x.node()->id()] = true;
      queue.push_back(x.node());
    }
  }
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.pop_front();
    for (const Edge* e : node->out_edges()) {
      if (!e->IsControlEdge() && !from_x[e->dst()->id()]) {
        from_x[e->dst()->id()] = true;
        queue.push_back(e->dst());
      }
    }
  }
  std::vector<bool> on_path(graph->num_node_ids(), false);
  for (const Output& y : ys) {
    if (from_x[y.node()->id()] && !on_path[y.node()->id()]) {
      on_path[y.node()->id()] = true;
      queue.push_back(y.node());
    }
  }
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.pop_front();
    for (const Edge* e : node->in_edges()) {
      if (!e->IsControlEdge() && from_x[e->src()->id()] && !on_path[e->src()->id()]) {
        on_path[e->src()->id()] = true;
        queue.push_back(e->src());
      }
    }
  }
  // A node is ready once every consumer on the path has sent its gradient.
  std::map<int, int> pending;
  for (Node* node : graph->nodes()) {
    if (!on_path[node->id()]) continue;
    int count = 0;
    for (const Edge* e : node->out_edges()) count += !e->IsControlEdge() && on_path[e->dst()->id()];
    pending[node->id()] = count;
  }
  std::map<TensorKey, std::vector<Gradient>> partials;
  for (size_t i = 0; i < ys.size(); ++i) {
    if (!on_path[ys[i].node()->id()]) continue;
    Output seed = grad_ys.empty() ? OnesLike(scope, ys[i]) : grad_ys[i];
    partials[{ys[i].node()->id(), ys[i].index()}].push_back(Gradient::Dense(seed));
  }
  std::set<TensorKey> wanted;
  for (const Output& x : xs) wanted.insert({x.node()->id(), x.index()});
  std::map<TensorKey, Gradient> results;
  std::vector<Node*> ready;
  for (const auto& [id, count] : pending) {
    if (count == 0) ready.push_back(graph->FindNodeId(id));
  }
  std::vector<std::string> blocked;  // non-differentiable ops on the path
  while (!ready.empty()) {
    Node* node = ready.back();
    ready.pop_back();
    // Go on only toward inputs on the path (an x with nothing upstream
    // stops here).
    bool upstream = false;
    for (const Edge* e : node->in_edges()) upstream |= !e->IsControlEdge() && on_path[e->src()->id()];
    std::vector<Gradient> sums(node->num_outputs());
    bool any = false;
    for (int i = 0; i < node->num_outputs(); ++i) {
      auto it = partials.find({node->id(), i});
      if (it == partials.end()) continue;
      sums[i] = SumPartials(scope, it->second);
      any = true;
      if (wanted.count({node->id(), i})) results[{node->id(), i}] = sums[i];
    }
    std::vector<Gradient> grad_inputs(node->num_inputs());
    bool passes = any && upstream;
    if (passes) {
      StatusOr<const GradientFunction*> fn = GradientRegistry::Global()->Lookup(node->type_string());
      if (!fn.ok()) {
        return errors::NotFound("no gradient is defined for op ", node->type_string(),
                                " (node ", node->Describe(), "), which lies between the ys and xs");
      }
      if (*fn == nullptr) {
        blocked.push_back(node->Describe());
      } else {
        // Gradient functions take dense gradients: a sparse one flowing on
        // through another op is densified here.
        std::vector<Output> grad_outputs(node->num_outputs());
        for (int i = 0; i < node->num_outputs(); ++i) {
          if (sums[i].valid()) grad_outputs[i] = Densify(scope, sums[i]);
        }
        Status s = CallGradientFunction(scope.NewSubScope("gradients"), node, grad_outputs, **fn,
                                        &grad_inputs);
        if (!s.ok()) return s.WithContext("gradient of node " + node->Describe());
        WEIR_RETURN_IF_ERROR(scope.status());
      }
    }
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge() || !on_path[e->src()->id()]) continue;
      const Gradient& g = grad_inputs[e->dst_input()];
      if (passes && g.valid()) partials[{e->src()->id(), e->src_output()}].push_back(g);
      if (--pending[e->src()->id()] == 0) ready.push_back(e->src());
    }
  }
  grad_xs->clear();
  for (const Output& x : xs) {
    auto it = results.find({x.node()->id(), x.index()});
    if (it == results.end()) {
      std::string why = !from_x[x.node()->id()] || !on_path[x.node()->id()]
                            ? "no y depends on it"
                            : StrCat("every path passes through a non-differentiable op (",
                                     StrJoin(blocked, "; "), ")");
      return errors::InvalidArgument("no gradient reaches '", x.name(), "': ", why);
    }
    grad_xs->push_back(it->second);
  }
  return Status::OK();
}

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            std::vector<Output>* grad_xs) {
  std::vector<Gradient> grads;
  WEIR_RETURN_IF_ERROR(AddSymbolicGradients(scope, ys, xs, grad_ys, &grads));
  grad_xs->clear();
  for (const Gradient& g : grads) grad_xs->push_back(Densify(scope.NewSubScope("gradients"), g));
  return scope.status();
}

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, std::vector<Output>* grad_xs) {
  return AddSymbolicGradients(scope, ys, xs, {}, grad_xs);
}

}  // namespace weir
