// AttrValue: the value of one attribute of a node (TensorFlow's AttrValue,
// in memory, without protobuf). AttrMap: a node's attributes by name.
// NameAttrList: a function and the attrs it is instantiated with, the value
// of a "func" attr (the branches of If, the body of While).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor.h"
#include "weir/framework/tensor_shape.h"
#include "weir/framework/types.h"

namespace weir {

struct NameAttrList;

class AttrValue {
 public:
  // Inside a function body, "$T": the value of the calling node's attr T.
  struct Placeholder {
    std::string name;
    bool operator==(const Placeholder& o) const { return name == o.name; }
  };
  // A "func" value. Shared and immutable, so copies are cheap.
  using Func = std::shared_ptr<const NameAttrList>;

  struct List {
    std::vector<std::string> s;
    std::vector<int64_t> i;
    std::vector<float> f;
    std::vector<bool> b;
    std::vector<DType> type;
    std::vector<PartialShape> shape;
    std::vector<Tensor> tensor;
    std::vector<Func> func;  // never null
    bool operator==(const List& o) const;
  };

  AttrValue() = default;  // no value set
  AttrValue(std::string s) : value_(std::move(s)) {}  // NOLINT
  AttrValue(const char* s) : value_(std::string(s)) {}  // NOLINT
  AttrValue(int64_t i) : value_(i) {}  // NOLINT
  AttrValue(int i) : value_(int64_t{i}) {}  // NOLINT
  AttrValue(float f) : value_(f) {}  // NOLINT
  AttrValue(double f) : value_(static_cast<float>(f)) {}  // NOLINT
  AttrValue(bool b) : value_(b) {}  // NOLINT
  AttrValue(DType t) : value_(t) {}  // NOLINT
  AttrValue(PartialShape shape) : value_(std::move(shape)) {}  // NOLINT
  AttrValue(const TensorShape& shape) : value_(PartialShape(shape)) {}  // NOLINT
  AttrValue(Tensor t) : value_(std::move(t)) {}  // NOLINT
  AttrValue(List list) : value_(std::move(list)) {}  // NOLINT
  AttrValue(Placeholder p) : value_(std::move(p)) {}  // NOLINT
  AttrValue(NameAttrList func);  // NOLINT
  AttrValue(std::vector<int64_t> ints) { List l; l.i = std::move(ints); value_ = std::move(l); }  // NOLINT
  AttrValue(std::vector<int> ints) { List l; l.i.assign(ints.begin(), ints.end()); value_ = std::move(l); }  // NOLINT
  AttrValue(std::vector<float> fs) { List l; l.f = std::move(fs); value_ = std::move(l); }  // NOLINT
  AttrValue(std::vector<DType> types) { List l; l.type = std::move(types); value_ = std::move(l); }  // NOLINT
  AttrValue(std::vector<std::string> ss) { List l; l.s = std::move(ss); value_ = std::move(l); }  // NOLINT
  AttrValue(std::vector<PartialShape> shapes) { List l; l.shape = std::move(shapes); value_ = std::move(l); }  // NOLINT

  bool has_value() const { return !std::holds_alternative<std::monostate>(value_); }
  bool is_s() const { return std::holds_alternative<std::string>(value_); }
  bool is_i() const { return std::holds_alternative<int64_t>(value_); }
  bool is_f() const { return std::holds_alternative<float>(value_); }
  bool is_b() const { return std::holds_alternative<bool>(value_); }
  bool is_type() const { return std::holds_alternative<DType>(value_); }
  bool is_shape() const { return std::holds_alternative<PartialShape>(value_); }
  bool is_tensor() const { return std::holds_alternative<Tensor>(value_); }
  bool is_list() const { return std::holds_alternative<List>(value_); }
  bool is_func() const { return std::holds_alternative<Func>(value_); }
  bool is_placeholder() const { return std::holds_alternative<Placeholder>(value_); }

  // REQUIRES: the matching is_*().
  const std::string& s() const { return std::get<std::string>(value_); }
  int64_t i() const { return std::get<int64_t>(value_); }
  float f() const { return std::get<float>(value_); }
  bool b() const { return std::get<bool>(value_); }
  DType type() const { return std::get<DType>(value_); }
  const PartialShape& shape() const { return std::get<PartialShape>(value_); }
  const Tensor& tensor() const { return std::get<Tensor>(value_); }
  const List& list() const { return std::get<List>(value_); }
  const NameAttrList& func() const { return *std::get<Func>(value_); }
  const std::string& placeholder() const { return std::get<Placeholder>(value_).name; }
  List* mutable_list() {
    if (!is_list()) value_ = List();
    return &std::get<List>(value_);
  }

  // The kind of value held, in OpDef attr-type spelling ("int", "list(type)",
  // "list" for an empty list, "none" when unset).
  std::string KindName() const;
  // Compact rendering for error messages and `weir inspect`.
  std::string DebugString() const;
  bool operator==(const AttrValue& other) const;

 private:
  std::variant<std::monostate, std::string, int64_t, float, bool, DType, PartialShape, Tensor,
               List, Func, Placeholder>
      value_;
};

using AttrMap = std::map<std::string, AttrValue>;

struct NameAttrList {
  std::string name;
  AttrMap attr;
  bool operator==(const NameAttrList& o) const { return name == o.name && attr == o.attr; }
};

// Typed lookups with errors that name the attr and what was found.
Status GetAttr(const AttrMap& attrs, const std::string& name, std::string* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, int64_t* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, int32_t* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, float* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, bool* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, DType* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, PartialShape* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, Tensor* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, std::vector<int64_t>* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, std::vector<int32_t>* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, std::vector<float>* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, std::vector<DType>* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, std::vector<std::string>* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, std::vector<PartialShape>* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, NameAttrList* value);
Status GetAttr(const AttrMap& attrs, const std::string& name, std::vector<NameAttrList>* value);

}  // namespace weir
