// Graph: the in-memory dataflow graph. Nodes are op instances (a NodeDef
// validated against its OpDef, with its input and output dtypes resolved);
// edges carry a tensor from an output slot to an input slot, or are control
// edges (slot kControlSlot) that only order execution.
//
// A Graph is not thread-safe: build or rewrite it from one thread, then share
// it read-only.
//
// Every mutation costs amortized O(1) per edge, whatever a node's fan-in or
// fan-out: edges know their positions in their nodes' lists (removal swaps
// with the last), data in-edges are indexed by slot, and control-edge
// duplicates are found through a per-node hash set built once a node has
// many in-edges. So building, importing and rewriting are linear in nodes +
// edges.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/node_def.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"

namespace weir {

class FunctionLibrary;  // graph/function_library.h
class Node;

class Edge {
 public:
  static constexpr int kControlSlot = -1;

  Node* src() const { return src_; }
  Node* dst() const { return dst_; }
  int src_output() const { return src_output_; }
  int dst_input() const { return dst_input_; }
  int id() const { return id_; }
  bool IsControlEdge() const { return src_output_ == kControlSlot; }

 private:
  friend class Graph;
  Node* src_ = nullptr;
  Node* dst_ = nullptr;
  int src_output_ = 0;
  int dst_input_ = 0;
  int id_ = -1;
  int in_pos_ = -1;   // index in dst_->in_edges_
  int out_pos_ = -1;  // index in src_->out_edges_
};

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_->name; }
  const std::string& type_string() const { return def_->op; }
  const NodeDef& def() const { return *def_; }
  const OpDef& op_def() const { return *op_def_; }
  // Attr edits only; inputs are edges and are rebuilt by Graph::ToGraphDef.
  // Valid until the graph is next copied.
  AttrMap* mutable_attrs() { return &MutableDef()->attrs; }
  // "'name' (Op) created at file:line", for messages.
  std::string Describe() const { return def_->Describe(); }

  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DType input_type(int i) const { return input_types_[i]; }
  DType output_type(int i) const { return output_types_[i]; }
  const std::vector<DType>& input_types() const { return input_types_; }
  const std::vector<DType>& output_types() const { return output_types_; }

  // In-edges and out-edges in an order that is deterministic but not
  // insertion order once edges were removed (removal swaps in the last).
  const std::vector<Edge*>& in_edges() const { return in_edges_; }
  const std::vector<Edge*>& out_edges() const { return out_edges_; }
  // The edge into data input `index`, or null if none is connected. O(1).
  const Edge* input_edge(int index) const;
  // Data in-edges by input slot (null for unconnected slots).
  std::vector<const Edge*> data_inputs() const;
  // Control in-edges in the order they were added.
  std::vector<const Edge*> control_inputs() const;

  const std::string& requested_device() const { return def_->device; }
  void set_requested_device(std::string device) { MutableDef()->device = std::move(device); }
  void set_source_location(std::string location) {
    MutableDef()->source_location = std::move(location);
  }
  // The device placement chose; empty before placement.
  const std::string& assigned_device() const { return assigned_device_; }
  void set_assigned_device(std::string device) { assigned_device_ = std::move(device); }

  // Shapes from shape inference (unknown rank until inferred).
  const PartialShape& output_shape(int i) const { return output_shapes_[i]; }
  void set_output_shapes(std::vector<PartialShape> shapes) { output_shapes_ = std::move(shapes); }
  // What output i refers to when it is a handle (HandleData, from shape
  // inference); empty when nothing is known.
  const HandleData& output_handle_data(int i) const;
  // One entry per output, or an empty vector for none.
  void set_output_handle_data(std::vector<HandleData> data) {
    output_handle_data_ = std::move(data);
  }

  bool is_stateful() const { return op_def_->is_stateful; }

 private:
  friend class Graph;
  // Copy-on-write: Graph::CopyFrom shares the defs (a compile copies the
  // session's graph for every signature, and most defs never change).
  NodeDef* MutableDef() {
    if (def_.use_count() > 1) def_ = std::make_shared<NodeDef>(*def_);
    return def_.get();
  }

  int id_ = -1;
  std::shared_ptr<NodeDef> def_;
  const OpDef* op_def_ = nullptr;
  std::vector<DType> input_types_;
  std::vector<DType> output_types_;
  std::vector<PartialShape> output_shapes_;
  std::vector<HandleData> output_handle_data_;  // empty, or one per output
  std::vector<Edge*> in_edges_;
  std::vector<Edge*> out_edges_;
  std::vector<Edge*> data_in_;  // by input slot
  // Control in-edges by source id; built by AddControlEdge once in_edges_
  // grows past a few, null before.
  std::unique_ptr<std::unordered_map<int, Edge*>> control_srcs_;
  std::string assigned_device_;
};

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Adds a node for `def` (its `inputs` are ignored: connect edges with
  // AddEdge). Looks the op up, fills in default attrs, validates attrs and
  // resolves dtypes. Errors name the node; the name must be new.
  StatusOr<Node*> AddNode(NodeDef def);
  // REQUIRES: slots in range, data input `dst_input` not yet connected and
  // dtypes compatible (callers check and report user errors first). A
  // control edge (both slots kControlSlot) is added even if it exists.
  const Edge* AddEdge(Node* src, int src_output, Node* dst, int dst_input);
  // Adds src -> dst as a control edge unless it already exists. Amortized
  // O(1).
  const Edge* AddControlEdge(Node* src, Node* dst);
  // O(1).
  void RemoveEdge(const Edge* edge);
  // Removes the node and all its edges, in O(its edges).
  void RemoveNode(Node* node);

  // A point to roll back to: everything added after it can be undone.
  struct Mark {
    int node_ids = 0;
    int edge_ids = 0;
  };
  Mark GetMark() const { return {num_node_ids(), static_cast<int>(edges_.size())}; }
  // Removes every node and edge added since `mark`, leaving the graph as it
  // was then (edge orders included). REQUIRES: nothing that existed at
  // `mark` was removed since, and NewName was not called.
  void RollBackTo(Mark mark);

  Node* FindNode(std::string_view name) const;
  Node* FindNodeId(int id) const {
    return id >= 0 && id < num_node_ids() ? nodes_[id].get() : nullptr;
  }
  // Live nodes in id order (ids are dense but may have holes after removal).
  std::vector<Node*> nodes() const;
  int num_nodes() const { return num_nodes_; }
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  int num_edges() const { return num_edges_; }

  // A name not yet used in this graph, "prefix" or "prefix_N".
  std::string NewName(std::string_view prefix);

  // The graph as a GraphDef: nodes in id order, data inputs by slot, then
  // control inputs in the order they were added. With `start_id`, only the
  // nodes with ids from it on (what Session::Extend needs after a Create).
  GraphDef ToGraphDef(int start_id = 0) const;
  // Makes this graph a copy of `other` (same names, ids compacted).
  void CopyFrom(const Graph& other);

  int producer() const { return producer_; }
  void set_producer(int producer) { producer_ = producer; }

  // The functions this graph's nodes may call (a GraphDef's library).
  // CopyFrom copies it.
  const FunctionLibrary& function_library() const { return *function_library_; }
  FunctionLibrary* mutable_function_library() { return function_library_.get(); }

 private:
  std::vector<std::unique_ptr<Node>> nodes_;  // by id; null after removal
  std::vector<std::unique_ptr<Edge>> edges_;  // by id; null after removal
  // Looked up by string_view without building a string.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>()(name); }
  };
  std::unordered_map<std::string, Node*, NameHash, std::equal_to<>> by_name_;
  std::unordered_map<std::string, int> name_counters_;
  int num_nodes_ = 0;
  int num_edges_ = 0;
  int producer_ = 0;
  std::unique_ptr<FunctionLibrary> function_library_;  // never null
};

}  // namespace weir
