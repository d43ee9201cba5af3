#include "weir/graph/algorithm.h"

#include <deque>

namespace weir {

bool IsBackEdge(const Edge* edge) {
  // A string_view compares lengths first: most ops differ there.
  constexpr std::string_view kNextIteration = "NextIteration";
  return std::string_view(edge->src()->type_string()) == kNextIteration;
}

StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& graph) {
  std::vector<int> pending(graph.num_node_ids(), 0);
  std::vector<Node*> ready;
  for (Node* node : graph.nodes()) {
    for (const Edge* e : node->in_edges()) {
      if (!IsBackEdge(e)) ++pending[node->id()];
    }
    if (pending[node->id()] == 0) ready.push_back(node);
  }
  std::vector<Node*> order;
  order.reserve(graph.num_nodes());
  while (!ready.empty()) {
    Node* node = ready.back();
    ready.pop_back();
    order.push_back(node);
    for (const Edge* e : node->out_edges()) {
      if (!IsBackEdge(e) && --pending[e->dst()->id()] == 0) ready.push_back(e->dst());
    }
  }
  if (static_cast<int>(order.size()) != graph.num_nodes()) {
    std::vector<std::string> stuck;
    for (Node* node : graph.nodes()) {
      if (pending[node->id()] > 0 && stuck.size() < 8) stuck.push_back("'" + node->name() + "'");
    }
    return errors::InvalidArgument(
        "the graph has a cycle that does not pass through a NextIteration node; nodes on or "
        "after it: ",
        StrJoin(stuck, ", "));
  }
  return order;
}

int PruneToRoots(Graph* graph, const std::vector<Node*>& roots) {
  std::vector<bool> keep(graph->num_node_ids(), false);
  std::deque<Node*> queue;
  for (Node* root : roots) {
    if (!keep[root->id()]) {
      keep[root->id()] = true;
      queue.push_back(root);
    }
  }
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.pop_front();
    for (const Edge* e : node->in_edges()) {
      if (!keep[e->src()->id()]) {
        keep[e->src()->id()] = true;
        queue.push_back(e->src());
      }
    }
  }
  int removed = 0;
  for (Node* node : graph->nodes()) {
    if (!keep[node->id()]) {
      graph->RemoveNode(node);
      ++removed;
    }
  }
  return removed;
}

}  // namespace weir
