#include "weir/framework/tensor_shape.h"

#include <algorithm>

#include "weir/base/checked_math.h"
#include "weir/base/logging.h"

namespace weir {
namespace {

// The element count of `dims`, or -1 when a dim is negative or the product
// exceeds kMaxTensorElements. One overflow test per dim, no division.
int64_t CountOrMinusOne(std::span<const int64_t> dims) {
  int64_t count = 1;
  bool bad = false;
  for (int64_t d : dims) {
    bad |= d < 0;
    bad |= __builtin_mul_overflow(count, d, &count);
  }
  return bad ? -1 : count;
}

std::string DimsString(std::span<const int64_t> dims) {
  return StrCat("[", StrJoin(dims, ","), "]");
}

}  // namespace

TensorShape::TensorShape(std::initializer_list<int64_t> dims)
    : TensorShape(std::span<const int64_t>(dims.begin(), dims.size())) {}

TensorShape::TensorShape(std::span<const int64_t> dims) { Assign(dims); }

StatusOr<TensorShape> TensorShape::FromDims(std::span<const int64_t> dims) {
  if (dims.size() > kMaxRank) {
    return errors::InvalidArgument("shape has rank ", dims.size(), ", more than ", kMaxRank);
  }
  if (CountOrMinusOne(dims) < 0) {
    for (int64_t d : dims) {
      if (d < 0) {
        return errors::InvalidArgument("shape ", DimsString(dims), " has a negative dimension");
      }
    }
    return errors::InvalidArgument("shape ", DimsString(dims),
                                   " has more than 2^63 - 1 elements");
  }
  return TensorShape(dims);
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
  num_elements_ = CountOrMinusOne(dim_sizes());
  CHECK(num_elements_ >= 0) << "TensorShape " << DebugString()
                            << " has a negative dim or more than 2^63 - 1 elements; shapes "
                               "from input must be built with FromDims or *WithStatus";
}

void TensorShape::AddDim(int64_t size) { InsertDim(rank_, size); }

Status TensorShape::AddDimWithStatus(int64_t size) { return InsertDimWithStatus(rank_, size); }

Status TensorShape::InsertDimWithStatus(int index, int64_t size) {
  if (index < 0 || index > rank_) {
    return errors::InvalidArgument("cannot insert a dim at index ", index, " of shape ",
                                   DebugString());
  }
  std::vector<int64_t> dims(dim_sizes().begin(), dim_sizes().end());
  dims.insert(dims.begin() + index, size);
  WEIR_ASSIGN_OR_RETURN(*this, FromDims(dims));
  return Status::OK();
}

Status TensorShape::SetDimWithStatus(int i, int64_t size) {
  if (i < 0 || i >= rank_) {
    return errors::InvalidArgument("dim ", i, " is out of range for shape ", DebugString());
  }
  std::vector<int64_t> dims(dim_sizes().begin(), dim_sizes().end());
  dims[i] = size;
  WEIR_ASSIGN_OR_RETURN(*this, FromDims(dims));
  return Status::OK();
}

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

StatusOr<PartialShape> PartialShape::FromDims(std::vector<int64_t> dims) {
  PartialShape shape(std::move(dims));
  WEIR_RETURN_IF_ERROR(shape.Validate());
  return shape;
}

Status PartialShape::Validate() const {
  if (!known_rank_) return Status::OK();
  if (dims_.size() > static_cast<size_t>(TensorShape::kMaxRank)) {
    return errors::InvalidArgument("shape has rank ", dims_.size(), ", more than ",
                                   TensorShape::kMaxRank);
  }
  for (int64_t d : dims_) {
    if (d < kUnknown) {
      return errors::InvalidArgument("shape ", DimsString(dims_), " has dimension ", d,
                                     "; sizes are >= 0, or -1 if unknown");
    }
  }
  // Valid when some value of the shape is a valid TensorShape: an unknown
  // dim may be 0, and then, as in TensorShape's product taken in order,
  // nothing after it counts. [?, 2^62, 2^62] is the shape of an empty slice.
  int64_t known = 1;
  for (int64_t d : dims_) {
    if (d == kUnknown) break;
    if (__builtin_mul_overflow(known, d, &known)) {
      return errors::InvalidArgument("shape ", DebugString(),
                                     " has more than 2^63 - 1 elements");
    }
  }
  return Status::OK();
}

TensorShape PartialShape::ToTensorShape() const {
  CHECK(IsFullyDefined()) << DebugString();
  return TensorShape(dims_);
}

int64_t PartialShape::num_elements() const {
  if (!IsFullyDefined()) return -1;
  return CountOrMinusOne(dims_);
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
