#include "weir/framework/tensor_shape.h"

#include <algorithm>
#include <limits>

#include "weir/base/logging.h"

namespace weir {

TensorShape::TensorShape(std::initializer_list<int64_t> dims)
    : TensorShape(std::span<const int64_t>(dims.begin(), dims.size())) {}

TensorShape::TensorShape(std::span<const int64_t> dims) { Assign(dims); }

StatusOr<TensorShape> TensorShape::FromDims(std::span<const int64_t> dims) {
  if (dims.size() > kMaxRank) {
    return errors::InvalidArgument("shape has rank ", dims.size(), ", more than ", kMaxRank);
  }
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      return errors::InvalidArgument("shape [", StrJoin(dims, ","),
                                     "] has a negative dimension");
    }
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) {
      return errors::InvalidArgument("shape [", StrJoin(dims, ","),
                                     "] has more than 2^63 elements");
    }
    count *= d;
  }
  return TensorShape(dims);
}

// Copies are on the executor's hot path (every tensor handed to a consumer):
// copy the fields, not the dims one by one with a recount.
TensorShape::TensorShape(const TensorShape& other)
    : rank_(other.rank_), num_elements_(other.num_elements_), heap_(other.heap_) {
  std::copy(other.inline_, other.inline_ + kInlineRank, inline_);
}

TensorShape& TensorShape::operator=(const TensorShape& other) {
  if (this == &other) return *this;
  rank_ = other.rank_;
  num_elements_ = other.num_elements_;
  std::copy(other.inline_, other.inline_ + kInlineRank, inline_);
  if (!other.heap_.empty() || !heap_.empty()) heap_ = other.heap_;
  return *this;
}

// The source becomes a scalar: its heap dims are gone, so keeping its rank
// would leave dim_sizes() pointing at nothing.
TensorShape::TensorShape(TensorShape&& other) noexcept
    : rank_(other.rank_), num_elements_(other.num_elements_), heap_(std::move(other.heap_)) {
  std::copy(other.inline_, other.inline_ + kInlineRank, inline_);
  other.rank_ = 0;
  other.num_elements_ = 1;
  other.heap_.clear();
}

TensorShape& TensorShape::operator=(TensorShape&& other) noexcept {
  if (this == &other) return *this;
  rank_ = other.rank_;
  num_elements_ = other.num_elements_;
  heap_ = std::move(other.heap_);
  std::copy(other.inline_, other.inline_ + kInlineRank, inline_);
  other.rank_ = 0;
  other.num_elements_ = 1;
  other.heap_.clear();
  return *this;
}

void TensorShape::Assign(std::span<const int64_t> dims) {
  rank_ = static_cast<int>(dims.size());
  if (rank_ <= kInlineRank) {
    heap_.clear();
    std::copy(dims.begin(), dims.end(), inline_);
  } else {
    heap_.assign(dims.begin(), dims.end());
  }
  Recount();
}

void TensorShape::Recount() {
  num_elements_ = 1;
  for (int64_t d : dim_sizes()) {
    DCHECK_GE(d, 0);
    num_elements_ *= d;
  }
}

void TensorShape::AddDim(int64_t size) { InsertDim(rank_, size); }

void TensorShape::InsertDim(int index, int64_t size) {
  CHECK(size >= 0 && index >= 0 && index <= rank_);
  std::vector<int64_t> dims(dim_sizes().begin(), dim_sizes().end());
  dims.insert(dims.begin() + index, size);
  Assign(dims);
}

void TensorShape::RemoveDim(int index) {
  CHECK(index >= 0 && index < rank_);
  std::vector<int64_t> dims(dim_sizes().begin(), dim_sizes().end());
  dims.erase(dims.begin() + index);
  Assign(dims);
}

void TensorShape::set_dim(int i, int64_t size) {
  CHECK(i >= 0 && i < rank_ && size >= 0);
  data()[i] = size;
  Recount();
}

bool TensorShape::operator==(const TensorShape& other) const {
  return rank_ == other.rank_ &&
         std::equal(data(), data() + rank_, other.data());
}

std::string TensorShape::DebugString() const { return StrCat("[", StrJoin(dim_sizes(), ","), "]"); }

std::ostream& operator<<(std::ostream& os, const TensorShape& shape) {
  return os << shape.DebugString();
}

PartialShape::PartialShape(const TensorShape& shape)
    : known_rank_(true), dims_(shape.dim_sizes().begin(), shape.dim_sizes().end()) {}

bool PartialShape::IsFullyDefined() const {
  return known_rank_ && std::none_of(dims_.begin(), dims_.end(),
                                     [](int64_t d) { return d < 0; });
}

TensorShape PartialShape::ToTensorShape() const {
  CHECK(IsFullyDefined()) << DebugString();
  return TensorShape(dims_);
}

int64_t PartialShape::num_elements() const {
  if (!IsFullyDefined()) return -1;
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

bool PartialShape::IsCompatibleWith(const TensorShape& shape) const {
  return IsCompatibleWith(PartialShape(shape));
}

bool PartialShape::IsCompatibleWith(const PartialShape& other) const {
  if (!known_rank_ || !other.known_rank_) return true;
  if (dims_.size() != other.dims_.size()) return false;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] >= 0 && other.dims_[i] >= 0 && dims_[i] != other.dims_[i]) return false;
  }
  return true;
}

StatusOr<PartialShape> PartialShape::Merge(const PartialShape& other) const {
  if (!IsCompatibleWith(other)) {
    return errors::InvalidArgument("shapes ", DebugString(), " and ", other.DebugString(),
                                   " are incompatible");
  }
  if (!known_rank_) return other;
  if (!other.known_rank_) return *this;
  std::vector<int64_t> merged(dims_);
  for (size_t i = 0; i < merged.size(); ++i) {
    if (merged[i] < 0) merged[i] = other.dims_[i];
  }
  return PartialShape(std::move(merged));
}

std::string PartialShape::DebugString() const {
  if (!known_rank_) return "<unknown>";
  std::string out = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += ",";
    out += dims_[i] < 0 ? "?" : std::to_string(dims_[i]);
  }
  return out + "]";
}

std::ostream& operator<<(std::ostream& os, const PartialShape& shape) {
  return os << shape.DebugString();
}

}  // namespace weir
