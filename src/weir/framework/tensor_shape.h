// TensorShape: the fully known shape of a tensor. PartialShape: a shape for
// shape inference, where the rank and any dimension may be unknown.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "weir/base/status.h"

namespace weir {

class TensorShape {
 public:
  static constexpr int kMaxRank = 254;

  TensorShape() = default;  // a scalar
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(std::span<const int64_t> dims);

  // Checks that every dim is >= 0, the rank is <= kMaxRank and the element
  // count does not overflow int64.
  static StatusOr<TensorShape> FromDims(std::span<const int64_t> dims);

  TensorShape(const TensorShape& other);
  TensorShape& operator=(const TensorShape& other);
  TensorShape(TensorShape&& other) noexcept;  // leaves `other` a scalar
  TensorShape& operator=(TensorShape&& other) noexcept;
  ~TensorShape() = default;

  int rank() const { return rank_; }
  int dims() const { return rank_; }  // TensorFlow's spelling
  int64_t dim_size(int i) const { return data()[i]; }
  int64_t num_elements() const { return num_elements_; }
  std::span<const int64_t> dim_sizes() const { return {data(), static_cast<size_t>(rank_)}; }

  // REQUIRES: size >= 0.
  void AddDim(int64_t size);
  void InsertDim(int index, int64_t size);
  void RemoveDim(int index);
  void set_dim(int i, int64_t size);

  bool operator==(const TensorShape& other) const;
  bool operator!=(const TensorShape& other) const { return !(*this == other); }

  // "[2,3]"; "[]" for a scalar.
  std::string DebugString() const;

 private:
  static constexpr int kInlineRank = 6;
  const int64_t* data() const { return rank_ <= kInlineRank ? inline_ : heap_.data(); }
  int64_t* data() { return rank_ <= kInlineRank ? inline_ : heap_.data(); }
  void Assign(std::span<const int64_t> dims);
  void Recount();

  int rank_ = 0;
  int64_t num_elements_ = 1;
  int64_t inline_[kInlineRank] = {};
  std::vector<int64_t> heap_;  // used only when rank_ > kInlineRank
};

std::ostream& operator<<(std::ostream& os, const TensorShape& shape);

// A shape whose rank (rank() == -1) or dims (dim == -1) may be unknown.
class PartialShape {
 public:
  static constexpr int64_t kUnknown = -1;

  PartialShape() = default;  // unknown rank
  PartialShape(std::initializer_list<int64_t> dims) : known_rank_(true), dims_(dims) {}
  explicit PartialShape(std::vector<int64_t> dims)
      : known_rank_(true), dims_(std::move(dims)) {}
  PartialShape(const TensorShape& shape);  // NOLINT: a full shape is a partial one

  static PartialShape UnknownRank() { return PartialShape(); }
  static PartialShape UnknownDims(int rank) {
    return PartialShape(std::vector<int64_t>(rank, kUnknown));
  }

  bool known_rank() const { return known_rank_; }
  int rank() const { return known_rank_ ? static_cast<int>(dims_.size()) : -1; }
  int64_t dim(int i) const { return dims_[i]; }
  const std::vector<int64_t>& dim_sizes() const { return dims_; }
  bool IsFullyDefined() const;
  // REQUIRES: IsFullyDefined().
  TensorShape ToTensorShape() const;
  // Number of elements, or -1 when not fully defined.
  int64_t num_elements() const;

  // True if `shape` could be a value of this partial shape.
  bool IsCompatibleWith(const TensorShape& shape) const;
  bool IsCompatibleWith(const PartialShape& other) const;
  // The most specific shape compatible with both; error if incompatible.
  StatusOr<PartialShape> Merge(const PartialShape& other) const;

  bool operator==(const PartialShape& other) const {
    return known_rank_ == other.known_rank_ && dims_ == other.dims_;
  }

  // "[?,784]", "<unknown>".
  std::string DebugString() const;

 private:
  bool known_rank_ = false;
  std::vector<int64_t> dims_;
};

std::ostream& operator<<(std::ostream& os, const PartialShape& shape);

}  // namespace weir
