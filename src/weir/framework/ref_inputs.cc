#include "weir/framework/ref_inputs.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "weir/framework/op_def.h"

namespace weir {
namespace {

struct RefInputTable {
  std::shared_mutex mu;
  std::unordered_map<std::string, std::vector<std::string>> args;  // op -> ref input args
};

RefInputTable& Table() {
  static RefInputTable* table = new RefInputTable();
  return *table;
}

}  // namespace

void DeclareRefInputs(const std::string& op, const std::vector<std::string>& args) {
  RefInputTable& table = Table();
  std::unique_lock<std::shared_mutex> lock(table.mu);
  std::vector<std::string>& declared = table.args[op];
  for (const std::string& arg : args) {
    if (std::find(declared.begin(), declared.end(), arg) == declared.end()) declared.push_back(arg);
  }
}

bool IsRefInputArg(const OpDef& op, int arg_index) {
  if (arg_index < 0 || arg_index >= static_cast<int>(op.inputs.size())) return false;
  RefInputTable& table = Table();
  std::shared_lock<std::shared_mutex> lock(table.mu);
  auto it = table.args.find(op.name);
  if (it == table.args.end()) return false;
  const std::string& name = op.inputs[arg_index].name;
  return std::find(it->second.begin(), it->second.end(), name) != it->second.end();
}

bool HasRefInputs(const OpDef& op) {
  RefInputTable& table = Table();
  std::shared_lock<std::shared_mutex> lock(table.mu);
  return table.args.count(op.name) > 0;
}

}  // namespace weir
