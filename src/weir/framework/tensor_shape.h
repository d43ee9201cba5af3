// TensorShape: the fully known shape of a tensor. PartialShape: a shape for
// shape inference, where the rank and any dimension may be unknown.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "weir/base/status.h"

namespace weir {

// Two ways to build one. The constructors, AddDim, InsertDim and set_dim
// are for dims the program already knows to be valid: a negative dim or an
// element count above 2^63 - 1 is a programmer error and CHECK-fails (it
// never wraps). Dims that come from input (attrs, tensor values, protos,
// files) go through FromDims or the *WithStatus mutators, which return
// InvalidArgument instead.
class TensorShape {
 public:
  static constexpr int kMaxRank = 254;

  TensorShape() = default;  // a scalar
  // REQUIRES: every dim >= 0 and their product <= 2^63 - 1.
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(std::span<const int64_t> dims);

  // Checks that every dim is >= 0, the rank is <= kMaxRank and the element
  // count does not overflow int64.
  static StatusOr<TensorShape> FromDims(std::span<const int64_t> dims);

  // Inline: every tensor the executor hands to a consumer copies or moves
  // its shape, and a call per copy is a good part of a cheap node's cost.
  // The fields are copied as they are (the inline dims whole, the heap dims
  // only when there are any), with no recount.
  TensorShape(const TensorShape& other) : rank_(other.rank_), num_elements_(other.num_elements_) {
    CopyInlineDims(other);
    if (!other.heap_.empty()) heap_ = other.heap_;
  }
  TensorShape& operator=(const TensorShape& other) {
    if (this == &other) return *this;
    rank_ = other.rank_;
    num_elements_ = other.num_elements_;
    CopyInlineDims(other);
    if (!other.heap_.empty() || !heap_.empty()) heap_ = other.heap_;
    return *this;
  }
  // Leaves `other` a scalar: its heap dims are gone, so keeping its rank
  // would leave dim_sizes() pointing at nothing.
  TensorShape(TensorShape&& other) noexcept
      : rank_(other.rank_), num_elements_(other.num_elements_) {
    CopyInlineDims(other);
    if (!other.heap_.empty()) heap_ = std::move(other.heap_);
    other.ResetToScalar();
  }
  TensorShape& operator=(TensorShape&& other) noexcept {
    if (this == &other) return *this;
    rank_ = other.rank_;
    num_elements_ = other.num_elements_;
    CopyInlineDims(other);
    if (!other.heap_.empty() || !heap_.empty()) heap_ = std::move(other.heap_);
    other.ResetToScalar();
    return *this;
  }
  ~TensorShape() = default;

  int rank() const { return rank_; }
  int dims() const { return rank_; }  // TensorFlow's spelling
  int64_t dim_size(int i) const { return data()[i]; }
  int64_t num_elements() const { return num_elements_; }
  std::span<const int64_t> dim_sizes() const { return {data(), static_cast<size_t>(rank_)}; }

  // REQUIRES: size >= 0, index in range, and the new element count fits.
  void AddDim(int64_t size);
  void InsertDim(int index, int64_t size);
  void RemoveDim(int index);
  void set_dim(int i, int64_t size);

  // The checked forms, for sizes from input: InvalidArgument naming the
  // shape and the size for a negative size, an index out of range, a rank
  // above kMaxRank or an element count above 2^63 - 1. On error the shape
  // is unchanged.
  Status AddDimWithStatus(int64_t size);
  Status InsertDimWithStatus(int index, int64_t size);
  Status SetDimWithStatus(int i, int64_t size);

  bool operator==(const TensorShape& other) const;
  bool operator!=(const TensorShape& other) const { return !(*this == other); }

  // "[2,3]"; "[]" for a scalar.
  std::string DebugString() const;

 private:
  static constexpr int kInlineRank = 6;
  const int64_t* data() const { return rank_ <= kInlineRank ? inline_ : heap_.data(); }
  int64_t* data() { return rank_ <= kInlineRank ? inline_ : heap_.data(); }
  void Assign(std::span<const int64_t> dims);
  void Recount();  // CHECKs the dims
  void CopyInlineDims(const TensorShape& other) {
    std::memcpy(inline_, other.inline_, sizeof(inline_));
  }
  void ResetToScalar() {
    rank_ = 0;
    num_elements_ = 1;
    heap_.clear();
  }

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
  // REQUIRES: rank >= 0.
  static PartialShape UnknownDims(int rank) {
    return PartialShape(std::vector<int64_t>(rank, kUnknown));
  }

  // The constructors take any dims; shapes from input go through FromDims
  // or Validate: rank <= TensorShape::kMaxRank, every dim >= 0 or -1, and
  // some value of the shape a valid TensorShape (the product of the dims
  // before the first unknown one <= 2^63 - 1, as that one may be 0), else
  // InvalidArgument naming the dims. An unknown rank is valid.
  static StatusOr<PartialShape> FromDims(std::vector<int64_t> dims);
  Status Validate() const;

  bool known_rank() const { return known_rank_; }
  int rank() const { return known_rank_ ? static_cast<int>(dims_.size()) : -1; }
  int64_t dim(int i) const { return dims_[i]; }
  const std::vector<int64_t>& dim_sizes() const { return dims_; }
  bool IsFullyDefined() const;
  // REQUIRES: IsFullyDefined() and Validate() passes (CHECKed).
  TensorShape ToTensorShape() const;
  // Number of elements, or -1 when not fully defined or when the count
  // exceeds 2^63 - 1 (a shape Validate() refuses).
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
