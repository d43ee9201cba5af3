// Variant: the element of a DT_VARIANT tensor. A type-erased value (a
// TensorList, an Optional) that kernels create and read; it never crosses a
// process or a file (TensorProto and checkpoints refuse it).
//
// Copies share the value: a Variant is a reference-counted pointer to an
// immutable VariantValue. A kernel that would change a value copies it first
// unless it holds the only reference (IsUnique), so a value two consumers
// read is never mutated under one of them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "weir/base/status.h"

namespace weir {

class Variant;

// The interface of the values a Variant holds.
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // "TensorList", "Optional": names the kind in error messages.
  virtual std::string_view TypeName() const = 0;
  virtual std::string DebugString() const = 0;
  // A copy of this value that the caller may mutate.
  virtual std::unique_ptr<VariantValue> Clone() const = 0;
  // The value of ZerosLike: the same structure with zeros for every tensor.
  virtual StatusOr<Variant> ZerosLike() const;
  // The value of AddN: elementwise sum with `other` (the gradients of a value
  // used twice). `other` may hold a different kind: an error then.
  virtual StatusOr<Variant> Add(const VariantValue& other) const;
};

class Variant {
 public:
  // An empty Variant (what a new DT_VARIANT tensor holds).
  Variant() = default;
  explicit Variant(std::shared_ptr<VariantValue> value) : value_(std::move(value)) {}

  template <typename T, typename... Args>
  static Variant Make(Args&&... args) {
    return Variant(std::make_shared<T>(std::forward<Args>(args)...));
  }

  bool empty() const { return value_ == nullptr; }
  const VariantValue* value() const { return value_.get(); }
  // The value as a T; null when empty or another kind.
  template <typename T>
  const T* get() const {
    return dynamic_cast<const T*>(value_.get());
  }
  // Whether this Variant holds the only reference to its value (so a kernel
  // that owns this Variant may change the value in place).
  bool IsUnique() const { return value_ != nullptr && value_.use_count() == 1; }
  // The value as a mutable T, copied first unless IsUnique(); null when
  // empty or another kind.
  template <typename T>
  T* GetMutable() {
    if (dynamic_cast<const T*>(value_.get()) == nullptr) return nullptr;
    if (!IsUnique()) value_ = std::shared_ptr<VariantValue>(value_->Clone());
    return static_cast<T*>(value_.get());
  }

  std::string_view TypeName() const { return value_ ? value_->TypeName() : "empty"; }
  std::string DebugString() const {
    return value_ ? value_->DebugString() : std::string("Variant(empty)");
  }
  // The same value object (variants have no value equality).
  bool operator==(const Variant& other) const { return value_ == other.value_; }

 private:
  std::shared_ptr<VariantValue> value_;
};

inline StatusOr<Variant> VariantValue::ZerosLike() const {
  return errors::Unimplemented("ZerosLike of a ", TypeName(), " variant is not supported");
}
inline StatusOr<Variant> VariantValue::Add(const VariantValue& other) const {
  return errors::Unimplemented("adding a ", TypeName(), " variant to a ", other.TypeName(),
                               " variant is not supported");
}

}  // namespace weir
