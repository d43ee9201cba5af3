// FunctionLibrary: the functions a Graph's nodes may call, by name, and the
// gradient function of each (a GraphDef's FunctionDefLibrary in memory).
// Entries are immutable and shared between copies of a library, so a
// function's signature OpDef keeps its address while any copy holds it.
// Copies share the whole table until one of them adds to it (copy on
// write), so copying a library (each scratch graph of an expansion holds
// one) costs O(1) whatever its size.
//
// A function is checked when it is added (ValidateFunction below), so code
// that instantiates one may rely on its structure: inputs resolve, every
// output has a ret.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/node_def.h"

namespace weir {

class FunctionLibrary {
 public:
  FunctionLibrary() = default;
  // Copies share the table (a move copies too, so the source stays valid).
  FunctionLibrary(const FunctionLibrary&) = default;
  FunctionLibrary& operator=(const FunctionLibrary&) = default;

  // Checks `def` and adds it under its signature's name. Adding a function
  // equal to the one of that name is a no-op; a different one is
  // AlreadyExists naming the function; a function named as a registered op
  // is InvalidArgument.
  Status AddFunction(FunctionDef def);
  // Adds every function and gradient of `library` (whose bodies may call
  // each other), checked as AddFunction does; on error nothing is added.
  Status AddLibrary(const FunctionDefLibrary& library);
  // Records that `def.gradient_func` computes the gradient of
  // `def.function_name`; both must be functions of the library.
  // AlreadyExists if another gradient is recorded.
  Status AddGradient(GradientDef def);

  // Null when there is no function of that name.
  const FunctionDef* Find(std::string_view name) const;
  // The gradient function's name, or "" when none is recorded.
  std::string FindGradient(std::string_view name) const;
  // The OpDef of `op`: a registered op, else the signature of the library's
  // function of that name. NotFound naming the op otherwise.
  StatusOr<const OpDef*> LookUpOp(const std::string& op) const;

  bool empty() const { return table_->functions.empty() && table_->gradients.empty(); }
  size_t num_functions() const { return table_->functions.size(); }
  // Functions and gradients in name order.
  FunctionDefLibrary ToLibrary() const;

 private:
  struct Table {
    std::map<std::string, std::shared_ptr<const FunctionDef>, std::less<>> functions;
    std::map<std::string, std::string, std::less<>> gradients;
  };
  // The table to add to: this library's own (copied first if shared).
  Table* MutableTable();

  std::shared_ptr<const Table> table_ = EmptyTable();
  static const std::shared_ptr<const Table>& EmptyTable();
};

// Resolves an op name to its OpDef (or null when there is none).
using OpLookup = std::function<const OpDef*(const std::string& op)>;

// Checks a function's structure; InvalidArgument naming the function (and
// the body node) otherwise:
// - the signature: arg names unique among inputs and among outputs, each arg
//   typed by exactly one of a dtype, a "type" attr or a "list(type)" attr,
//   number_attr naming an "int" attr; attr names unique;
// - the body: node names non-empty, unique and not those of inputs; every
//   input "arg", "node:output" or "node:output:index" (output an output
//   arg of the node's op, index below its size where the node's attrs fix
//   it) or "^node"; data inputs before control inputs. An op unknown to
//   `lookup` is not an error here (libraries carry functions no step calls:
//   savers, gradients); instantiating the function reports it;
// - every output arg has a ret (and every ret names an output arg) that
//   resolves like an input; every control_ret names a body node.
Status ValidateFunction(const FunctionDef& def, const OpLookup& lookup);

// Equal field by field (doc strings and shape functions aside).
bool FunctionDefsEqual(const FunctionDef& a, const FunctionDef& b);

// How many tensors each arg stands for given a node's attrs (defaults
// included), as ArgCount (framework/node_def_util.h) counts them; -1 where
// it cannot (the attr is missing, not yet bound by a placeholder, or out
// of range).
std::vector<int64_t> ArgSizes(const std::vector<ArgDef>& args, const AttrMap& attrs);

// An input of a body node in function form: "arg" or "arg:i" (an
// argument), "node:output" (a whole output arg) or "node:output:index",
// "^node" (control). `index` is -1 for a whole arg.
struct FunctionInput {
  bool control = false;
  std::string node;    // the argument's or body node's name
  std::string output;  // the output arg's name; empty for an argument
  int64_t index = -1;
};
// InvalidArgument naming the text when it is none of those forms.
StatusOr<FunctionInput> ParseFunctionInput(std::string_view text);

}  // namespace weir
