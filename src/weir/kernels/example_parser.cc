#include "weir/kernels/example_parser.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <cstring>

#include "weir/base/checked_math.h"

namespace weir {
namespace {

static_assert(std::endian::native == std::endian::little,
              "packed floats are copied as little-endian bytes");

// Protobuf wire types.
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kStartGroup = 3;
constexpr int kEndGroup = 4;
constexpr int kFixed32 = 5;
// Protobuf's own limit on nesting.
constexpr int kMaxGroupDepth = 100;

// Feature's oneof members: field numbers of feature.proto.
constexpr int kNoKind = 0;
constexpr int kBytesList = 1;
constexpr int kFloatList = 2;
constexpr int kInt64List = 3;

class WireReader {
 public:
  explicit WireReader(std::string_view bytes)
      : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool done() const { return p_ == end_; }
  const char* position() const { return p_; }

  bool ReadVarint(uint64_t* value) {
    if (p_ != end_ && static_cast<uint8_t>(*p_) < 0x80) {  // the common one-byte case
      *value = static_cast<uint8_t>(*p_++);
      return true;
    }
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const uint8_t byte = static_cast<uint8_t>(*p_++);
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (byte < 0x80) {
        *value = result;
        return true;
      }
    }
    return false;  // longer than 10 bytes
  }

  bool ReadTag(int* field, int* wire_type) {
    uint64_t tag;
    if (!ReadVarint(&tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) return false;
    *field = static_cast<int>(tag >> 3);
    *wire_type = static_cast<int>(tag & 7);
    return true;
  }

  bool ReadBytes(size_t size, std::string_view* out) {
    if (size > static_cast<size_t>(end_ - p_)) return false;
    *out = std::string_view(p_, size);
    p_ += size;
    return true;
  }

  bool ReadLengthDelimited(std::string_view* out) {
    uint64_t size;
    return ReadVarint(&size) && ReadBytes(size, out);
  }

  // Skips the value of a field just read (`field`, `wire_type`). Groups
  // (deprecated, but protobuf parsers accept them as unknown fields) are
  // skipped to their matching end; a stray end of group is malformed.
  bool Skip(int field, int wire_type, int depth = 0) {
    uint64_t unused;
    std::string_view bytes;
    switch (wire_type) {
      case kVarint: return ReadVarint(&unused);
      case kFixed64: return ReadBytes(8, &bytes);
      case kLengthDelimited: return ReadLengthDelimited(&bytes);
      case kFixed32: return ReadBytes(4, &bytes);
      case kStartGroup: {
        if (depth >= kMaxGroupDepth) return false;
        int inner_field, inner_type;
        while (ReadTag(&inner_field, &inner_type)) {
          if (inner_type == kEndGroup) return inner_field == field;
          if (!Skip(inner_field, inner_type, depth + 1)) return false;
        }
        return false;
      }
      default: return false;
    }
  }

 private:
  const char* p_;
  const char* end_;
};

// A requested feature as found in one example: its Feature message bytes.
struct Found {
  std::string_view feature;
  bool present = false;
};

// Calls fn(list) for each list message of `feature`'s final oneof member,
// and sets *kind to that member (kNoKind for an empty Feature). A later
// member clears the earlier ones; repeats of one member merge.
template <typename Fn>
bool ForEachList(std::string_view feature, int* kind, Fn&& fn) {
  WireReader reader(feature);
  *kind = kNoKind;
  const char* start = feature.data();
  int field, wire_type;
  while (!reader.done()) {
    const char* here = reader.position();
    if (!reader.ReadTag(&field, &wire_type)) return false;
    if (field >= kBytesList && field <= kInt64List && wire_type == kLengthDelimited) {
      if (field != *kind) {
        *kind = field;
        start = here;
      }
    }
    if (!reader.Skip(field, wire_type)) return false;
  }
  if (*kind == kNoKind) return true;
  WireReader lists(std::string_view(start, feature.data() + feature.size() - start));
  while (!lists.done()) {
    std::string_view list;
    if (!lists.ReadTag(&field, &wire_type)) return false;
    if (field == *kind && wire_type == kLengthDelimited) {
      if (!lists.ReadLengthDelimited(&list) || !fn(list)) return false;
    } else if (!lists.Skip(field, wire_type)) {
      return false;
    }
  }
  return true;
}

// The values of one list message (field 1 of BytesList, FloatList or
// Int64List), packed or not. Sinks: bytes(string_view), floats(const char*
// little-endian data, count), ints(int64_t).
template <typename Sink>
bool ForEachBytes(std::string_view list, Sink&& sink) {
  WireReader reader(list);
  int field, wire_type;
  while (!reader.done()) {
    if (!reader.ReadTag(&field, &wire_type)) return false;
    if (field == 1 && wire_type == kLengthDelimited) {
      std::string_view value;
      if (!reader.ReadLengthDelimited(&value)) return false;
      sink(value);
    } else if (!reader.Skip(field, wire_type)) {
      return false;
    }
  }
  return true;
}

template <typename Sink>
bool ForEachFloats(std::string_view list, Sink&& sink) {
  WireReader reader(list);
  int field, wire_type;
  while (!reader.done()) {
    if (!reader.ReadTag(&field, &wire_type)) return false;
    std::string_view values;
    if (field == 1 && wire_type == kLengthDelimited) {
      if (!reader.ReadLengthDelimited(&values) || values.size() % 4 != 0) return false;
      sink(values.data(), values.size() / 4);
    } else if (field == 1 && wire_type == kFixed32) {
      if (!reader.ReadBytes(4, &values)) return false;
      sink(values.data(), 1);
    } else if (!reader.Skip(field, wire_type)) {
      return false;
    }
  }
  return true;
}

template <typename Sink>
bool ForEachInt64(std::string_view list, Sink&& sink) {
  WireReader reader(list);
  int field, wire_type;
  uint64_t value;
  while (!reader.done()) {
    if (!reader.ReadTag(&field, &wire_type)) return false;
    if (field == 1 && wire_type == kLengthDelimited) {
      std::string_view packed;
      if (!reader.ReadLengthDelimited(&packed)) return false;
      WireReader values(packed);
      while (!values.done()) {
        if (!values.ReadVarint(&value)) return false;
        sink(static_cast<int64_t>(value));
      }
    } else if (field == 1 && wire_type == kVarint) {
      if (!reader.ReadVarint(&value)) return false;
      sink(static_cast<int64_t>(value));
    } else if (!reader.Skip(field, wire_type)) {
      return false;
    }
  }
  return true;
}

DType KindDType(int kind) {
  switch (kind) {
    case kBytesList: return DT_STRING;
    case kFloatList: return DT_FLOAT;
    case kInt64List: return DT_INT64;
    default: return DT_INVALID;
  }
}

// Appends the values of `feature` (of `dtype`) to the vector `values`.
// Returns the list kind found; false when malformed.
template <typename T>
bool AppendValues(std::string_view feature, std::vector<T>* values, int* kind) {
  return ForEachList(feature, kind, [&](std::string_view list) {
    if constexpr (std::is_same_v<T, float>) {
      if (*kind != kFloatList) return true;  // the caller reports the type
      return ForEachFloats(list, [&](const char* data, size_t count) {
        if (count == 0) return;
        const size_t old = values->size();
        values->resize(old + count);
        std::memcpy(values->data() + old, data, count * sizeof(float));
      });
    } else if constexpr (std::is_same_v<T, int64_t>) {
      if (*kind != kInt64List) return true;
      return ForEachInt64(list, [&](int64_t v) { values->push_back(v); });
    } else {
      if (*kind != kBytesList) return true;
      return ForEachBytes(list, [&](std::string_view v) { values->push_back(v); });
    }
  });
}

// Writes up to `limit` values of `feature` into `out`; *count gets how many
// it holds (possibly more than `limit`).
template <typename T>
bool WriteValues(std::string_view feature, T* out, int64_t limit, int64_t* count, int* kind) {
  *count = 0;
  return ForEachList(feature, kind, [&](std::string_view list) {
    if constexpr (std::is_same_v<T, float>) {
      if (*kind != kFloatList) return true;
      return ForEachFloats(list, [&](const char* data, size_t n) {
        const int64_t fits = std::clamp<int64_t>(limit - *count, 0, static_cast<int64_t>(n));
        if (fits > 0) std::memcpy(out + *count, data, fits * sizeof(float));
        *count += static_cast<int64_t>(n);
      });
    } else if constexpr (std::is_same_v<T, int64_t>) {
      if (*kind != kInt64List) return true;
      return ForEachInt64(list, [&](int64_t v) {
        if (*count < limit) out[*count] = v;
        ++*count;
      });
    } else {
      if (*kind != kBytesList) return true;
      return ForEachBytes(list, [&](std::string_view v) {
        if (*count < limit) out[*count].assign(v.data(), v.size());
        ++*count;
      });
    }
  });
}

// The values of one variable-length feature across a batch.
struct VarLenValues {
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string_view> bytes;  // into the serialized input
  std::vector<int64_t> ends;            // cumulative value count after each example

  int64_t size() const { return static_cast<int64_t>(floats.size() + ints.size() + bytes.size()); }
};

// Calls fn.template operator()<T, Stored>() for a feature dtype, Stored
// being what VarLenValues keeps for it.
template <typename Fn>
void DispatchFeatureDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_FLOAT: fn.template operator()<float>(); break;
    case DT_INT64: fn.template operator()<int64_t>(); break;
    default: fn.template operator()<std::string>(); break;
  }
}

template <typename T>
auto& Stored(VarLenValues& v) {
  if constexpr (std::is_same_v<T, float>) {
    return v.floats;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return v.ints;
  } else {
    return v.bytes;
  }
}

// Copies values [begin, end) of `v` (of element type T) to `out`.
template <typename T>
void CopyStored(VarLenValues& v, int64_t begin, int64_t end, T* out) {
  auto& stored = Stored<T>(v);
  for (int64_t i = begin; i < end; ++i) {
    if constexpr (std::is_same_v<T, std::string>) {
      out[i - begin].assign(stored[i].data(), stored[i].size());
    } else {
      out[i - begin] = stored[i];
    }
  }
}

Status CheckFeatureDType(DType dtype, std::string_view what, std::string_view key) {
  if (dtype == DT_FLOAT || dtype == DT_INT64 || dtype == DT_STRING) return Status::OK();
  return errors::InvalidArgument(what, " feature '", key, "' has dtype ", dtype,
                                 "; Example features are float, int64 or string");
}

// The shape of a dense feature's output; the key names it in errors.
StatusOr<TensorShape> MakeShape(std::vector<int64_t> dims, std::string_view key) {
  StatusOr<int64_t> count = CheckedElementCount(dims, "its output");
  if (!count.ok()) return count.status().WithContext(StrCat("dense feature '", key, "'"));
  return TensorShape::FromDims(dims);
}

// [batch,] then `dims`.
std::vector<int64_t> Prefixed(bool batched, int64_t batch, std::span<const int64_t> dims) {
  std::vector<int64_t> out;
  if (batched) out.push_back(batch);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

}  // namespace

StatusOr<ExampleParser> ExampleParser::Create(ExampleParserConfig config) {
  std::vector<std::pair<std::string, int>> keys;
  int number = 0;
  for (const DenseFeatureConfig& dense : config.dense) {
    WEIR_RETURN_IF_ERROR(CheckFeatureDType(dense.dtype, "dense", dense.key));
    const PartialShape& shape = dense.shape;
    bool known = shape.known_rank();
    for (int d = 1; known && d < shape.rank(); ++d) known = shape.dim(d) >= 0;
    if (!known) {
      return errors::InvalidArgument("dense feature '", dense.key, "' has shape ", shape,
                                     ": only its first dim may be unknown");
    }
    const bool variable_length = shape.rank() > 0 && shape.dim(0) < 0;
    const Tensor& def = dense.default_value;
    if (def.IsInitialized() && def.dtype() != dense.dtype) {
      return errors::InvalidArgument("dense feature '", dense.key, "' is ", dense.dtype,
                                     " but its default is ", def.dtype());
    }
    const int64_t default_elements = def.IsInitialized() ? def.NumElements() : 0;
    if (variable_length && default_elements != 1) {
      return errors::InvalidArgument(
          "dense feature '", dense.key, "' has variable-length shape ", shape,
          ", so its default must be one element (the padding value), not shape ", def.shape());
    }
    if (!variable_length && default_elements > 0 && !shape.IsCompatibleWith(def.shape())) {
      return errors::InvalidArgument("dense feature '", dense.key, "' has shape ", shape,
                                     " but its default has shape ", def.shape());
    }
    StatusOr<int64_t> elements = CheckedElementCount(
        std::span<const int64_t>(shape.dim_sizes()).subspan(variable_length ? 1 : 0), "its shape");
    if (!elements.ok()) {
      return elements.status().WithContext(StrCat("dense feature '", dense.key, "'"));
    }
    keys.emplace_back(dense.key, number++);
  }
  for (const VarLenFeatureConfig& sparse : config.sparse) {
    WEIR_RETURN_IF_ERROR(CheckFeatureDType(sparse.dtype, "sparse", sparse.key));
    keys.emplace_back(sparse.key, number++);
  }
  for (const VarLenFeatureConfig& ragged : config.ragged) {
    WEIR_RETURN_IF_ERROR(CheckFeatureDType(ragged.dtype, "ragged", ragged.key));
    if (ragged.split_dtype != DT_INT32 && ragged.split_dtype != DT_INT64) {
      return errors::InvalidArgument("ragged feature '", ragged.key, "' has row splits of ",
                                     ragged.split_dtype, "; they are int32 or int64");
    }
    keys.emplace_back(ragged.key, number++);
  }
  std::sort(keys.begin(), keys.end());
  for (size_t i = 1; i < keys.size(); ++i) {
    if (keys[i].first == keys[i - 1].first) {
      return errors::InvalidArgument("feature key '", keys[i].first,
                                     "' is requested twice; each key may be parsed once");
    }
  }
  ExampleParser parser(std::move(config));
  parser.keys_ = std::move(keys);
  return parser;
}

int ExampleParser::Find(std::string_view key) const {
  auto it = std::lower_bound(keys_.begin(), keys_.end(), key,
                             [](const auto& entry, std::string_view k) { return entry.first < k; });
  return it != keys_.end() && it->first == key ? it->second : -1;
}

Status ExampleParser::Parse(std::span<const std::string> serialized,
                            std::span<const std::string> names, bool batched, Allocator* allocator,
                            ParsedExamples* out) const {
  const int64_t batch = static_cast<int64_t>(serialized.size());
  DCHECK(batched || batch == 1);
  const int num_dense = static_cast<int>(config_.dense.size());
  const int num_sparse = static_cast<int>(config_.sparse.size());
  const int num_ragged = static_cast<int>(config_.ragged.size());
  auto where = [&](int64_t i) {
    std::string text = batched ? StrCat("example ", i) : std::string("the example");
    if (!names.empty() && !names[i].empty()) text += StrCat(" ('", names[i], "')");
    return text;
  };

  // Fixed-length dense outputs are written in place. A required feature
  // needs at least a byte per value, which bounds the output by the input
  // before anything is allocated.
  *out = ParsedExamples();
  out->dense_values.resize(num_dense);
  std::vector<int64_t> dense_elements(num_dense, 0);  // per example (per row when variable)
  std::vector<VarLenValues> var_dense(num_dense);
  for (int d = 0; d < num_dense; ++d) {
    const DenseFeatureConfig& dense = config_.dense[d];
    const bool variable_length = dense.shape.rank() > 0 && dense.shape.dim(0) < 0;
    std::span<const int64_t> dims(dense.shape.dim_sizes());
    if (variable_length) dims = dims.subspan(1);
    WEIR_ASSIGN_OR_RETURN(dense_elements[d], CheckedElementCount(dims, "a dense feature"));
    if (variable_length) continue;
    const bool required =
        !dense.default_value.IsInitialized() || dense.default_value.NumElements() == 0;
    for (int64_t i = 0; required && i < batch; ++i) {
      if (dense_elements[d] > static_cast<int64_t>(serialized[i].size())) {
        return errors::InvalidArgument(where(i), ": required feature '", dense.key, "' needs ",
                                       dense_elements[d], " values (dense shape ", dense.shape,
                                       ") but the serialized Example has only ",
                                       serialized[i].size(), " bytes");
      }
    }
    WEIR_ASSIGN_OR_RETURN(TensorShape shape,
                          MakeShape(Prefixed(batched, batch, dense.shape.dim_sizes()), dense.key));
    WEIR_ASSIGN_OR_RETURN(out->dense_values[d], Tensor::Allocate(allocator, dense.dtype, shape));
  }
  std::vector<VarLenValues> sparse(num_sparse), ragged(num_ragged);

  std::vector<Found> found(keys_.size());
  // Merged map values, kept for the whole call: `found` and the string
  // features' values point into them until the outputs are built.
  std::deque<std::string> merged_values;
  for (int64_t i = 0; i < batch; ++i) {
    // Find the requested features' Feature messages (the last entry of a
    // key wins, as in protobuf's maps).
    std::fill(found.begin(), found.end(), Found());
    bool parsed = true;
    WireReader example(serialized[i]);
    int field, wire_type;
    while (parsed && !example.done()) {
      std::string_view features;
      parsed = example.ReadTag(&field, &wire_type);
      if (!parsed) break;
      if (field != 1 || wire_type != kLengthDelimited) {
        parsed = example.Skip(field, wire_type);
        continue;
      }
      parsed = example.ReadLengthDelimited(&features);
      WireReader entries(features);
      while (parsed && !entries.done()) {
        std::string_view entry;
        parsed = entries.ReadTag(&field, &wire_type);
        if (!parsed) break;
        if (field != 1 || wire_type != kLengthDelimited) {
          parsed = entries.Skip(field, wire_type);
          continue;
        }
        parsed = entries.ReadLengthDelimited(&entry);
        WireReader key_value(entry);
        std::string_view key, value;
        std::string* merged = nullptr;
        while (parsed && !key_value.done()) {
          parsed = key_value.ReadTag(&field, &wire_type);
          if (!parsed) break;
          if (field == 1 && wire_type == kLengthDelimited) {
            parsed = key_value.ReadLengthDelimited(&key);
          } else if (field == 2 && wire_type == kLengthDelimited) {
            std::string_view more;
            parsed = key_value.ReadLengthDelimited(&more);
            if (value.data() == nullptr) {
              value = more;
            } else {
              // A value given twice merges, which for a message is parsing
              // the serializations one after the other: one string per
              // entry, appended to (linear in the entry's size).
              if (merged == nullptr) merged = &merged_values.emplace_back(value);
              merged->append(more);
              value = *merged;
            }
          } else {
            parsed = key_value.Skip(field, wire_type);
          }
        }
        const int number = parsed ? Find(key) : -1;
        if (number >= 0) found[number] = Found{value, true};
      }
    }
    if (!parsed) {
      return errors::InvalidArgument(where(i), ": the serialized Example (", serialized[i].size(),
                                     " bytes) is malformed: not a tf.train.Example");
    }

    auto malformed = [&](const std::string& key) {
      return errors::InvalidArgument(where(i), ": feature '", key,
                                     "' is malformed (its values do not parse)");
    };
    auto wrong_type = [&](const std::string& key, int kind, DType expected) {
      return errors::InvalidArgument(where(i), ": feature '", key, "' holds ", KindDType(kind),
                                     " values but ", expected, " was expected");
    };

    for (int d = 0; d < num_dense; ++d) {
      const DenseFeatureConfig& dense = config_.dense[d];
      const Found& f = found[d];
      const bool variable_length = dense.shape.rank() > 0 && dense.shape.dim(0) < 0;
      int kind = kNoKind;
      if (variable_length) {
        VarLenValues& values = var_dense[d];
        if (f.present) {
          bool ok = true;
          DispatchFeatureDType(dense.dtype, [&]<typename T>() {
            ok = AppendValues(f.feature, &Stored<T>(values), &kind);
          });
          if (!ok) return malformed(dense.key);
          if (kind != kNoKind && KindDType(kind) != dense.dtype) {
            return wrong_type(dense.key, kind, dense.dtype);
          }
        }
        const int64_t count = values.size() - (values.ends.empty() ? 0 : values.ends.back());
        if (dense_elements[d] == 0 ? count != 0 : count % dense_elements[d] != 0) {
          return errors::InvalidArgument(where(i), ": feature '", dense.key, "' has ", count, " ",
                                         dense.dtype, " values, not a multiple of the ",
                                         dense_elements[d], " of each row of dense shape ",
                                         dense.shape);
        }
        values.ends.push_back(values.size());
        continue;
      }
      Tensor& output = out->dense_values[d];
      const int64_t n = dense_elements[d];
      const Tensor& def = dense.default_value;
      if (!f.present) {
        if (!def.IsInitialized() || def.NumElements() == 0) {
          return errors::InvalidArgument(where(i), ": feature '", dense.key, "' (", dense.dtype,
                                         ", dense shape ", dense.shape,
                                         ") is required but missing, and has no default");
        }
        DispatchFeatureDType(dense.dtype, [&]<typename T>() {
          std::copy_n(def.data<T>(), n, output.data<T>() + i * n);
        });
        continue;
      }
      int64_t count = 0;
      bool ok = true;
      DispatchFeatureDType(dense.dtype, [&]<typename T>() {
        ok = WriteValues(f.feature, output.data<T>() + i * n, n, &count, &kind);
      });
      if (!ok) return malformed(dense.key);
      if (kind != kNoKind && KindDType(kind) != dense.dtype) {
        return wrong_type(dense.key, kind, dense.dtype);
      }
      if (count != n) {
        return errors::InvalidArgument(where(i), ": feature '", dense.key, "' has ", count, " ",
                                       dense.dtype, " values but its dense shape ", dense.shape,
                                       " needs ", n);
      }
    }
    for (int group = 0; group < 2; ++group) {
      const auto& configs = group == 0 ? config_.sparse : config_.ragged;
      auto& values_of = group == 0 ? sparse : ragged;
      for (size_t s = 0; s < configs.size(); ++s) {
        const VarLenFeatureConfig& feature = configs[s];
        const Found& f = found[num_dense + (group == 0 ? 0 : num_sparse) + s];
        VarLenValues& values = values_of[s];
        if (f.present) {
          int kind = kNoKind;
          bool ok = true;
          DispatchFeatureDType(feature.dtype, [&]<typename T>() {
            ok = AppendValues(f.feature, &Stored<T>(values), &kind);
          });
          if (!ok) return malformed(feature.key);
          if (kind != kNoKind && KindDType(kind) != feature.dtype) {
            return wrong_type(feature.key, kind, feature.dtype);
          }
        }
        values.ends.push_back(values.size());
      }
    }
  }

  // Variable-length dense features: rows padded to the longest example.
  for (int d = 0; d < num_dense; ++d) {
    const DenseFeatureConfig& dense = config_.dense[d];
    if (!(dense.shape.rank() > 0 && dense.shape.dim(0) < 0)) continue;
    VarLenValues& values = var_dense[d];
    const int64_t row = dense_elements[d];
    int64_t max_rows = 0;
    for (int64_t i = 0; i < batch; ++i) {
      const int64_t begin = i == 0 ? 0 : values.ends[i - 1];
      if (row > 0) max_rows = std::max(max_rows, (values.ends[i] - begin) / row);
    }
    std::vector<int64_t> dims = dense.shape.dim_sizes();
    dims[0] = max_rows;
    WEIR_ASSIGN_OR_RETURN(TensorShape shape, MakeShape(Prefixed(batched, batch, dims), dense.key));
    WEIR_ASSIGN_OR_RETURN(Tensor output, Tensor::Allocate(allocator, dense.dtype, shape));
    int64_t per_example;
    WEIR_RETURN_IF_ERROR(CheckedMultiply(max_rows, row, &per_example, "dense feature size"));
    DispatchFeatureDType(dense.dtype, [&]<typename T>() {
      T* data = output.data<T>();
      const T& padding = dense.default_value.data<T>()[0];
      for (int64_t i = 0; i < batch; ++i) {
        const int64_t begin = i == 0 ? 0 : values.ends[i - 1];
        T* slot = data + i * per_example;
        CopyStored<T>(values, begin, values.ends[i], slot);
        std::fill(slot + (values.ends[i] - begin), slot + per_example, padding);
      }
    });
    out->dense_values[d] = std::move(output);
  }

  // Sparse features: (example,) position indices, values, dense shape.
  const int64_t rank = batched ? 2 : 1;
  for (int s = 0; s < num_sparse; ++s) {
    VarLenValues& values = sparse[s];
    const int64_t total = values.size();
    WEIR_ASSIGN_OR_RETURN(Tensor indices,
                          Tensor::Allocate(allocator, DT_INT64, TensorShape({total, rank})));
    WEIR_ASSIGN_OR_RETURN(Tensor shape, Tensor::Allocate(allocator, DT_INT64, TensorShape({rank})));
    int64_t* index = indices.data<int64_t>();
    int64_t longest = 0;
    for (int64_t i = 0; i < batch; ++i) {
      const int64_t begin = i == 0 ? 0 : values.ends[i - 1];
      longest = std::max(longest, values.ends[i] - begin);
      for (int64_t j = 0; j < values.ends[i] - begin; ++j) {
        if (batched) *index++ = i;
        *index++ = j;
      }
    }
    shape.data<int64_t>()[0] = batched ? batch : longest;
    if (batched) shape.data<int64_t>()[1] = longest;
    WEIR_ASSIGN_OR_RETURN(Tensor value_tensor, Tensor::Allocate(allocator, config_.sparse[s].dtype,
                                                                TensorShape({total})));
    DispatchFeatureDType(config_.sparse[s].dtype, [&]<typename T>() {
      CopyStored<T>(values, 0, total, value_tensor.data<T>());
    });
    out->sparse_indices.push_back(std::move(indices));
    out->sparse_values.push_back(std::move(value_tensor));
    out->sparse_shapes.push_back(std::move(shape));
  }

  // Ragged features: values and row splits (none for a single example).
  for (int r = 0; r < num_ragged; ++r) {
    VarLenValues& values = ragged[r];
    const int64_t total = values.size();
    WEIR_ASSIGN_OR_RETURN(Tensor value_tensor, Tensor::Allocate(allocator, config_.ragged[r].dtype,
                                                                TensorShape({total})));
    DispatchFeatureDType(config_.ragged[r].dtype, [&]<typename T>() {
      CopyStored<T>(values, 0, total, value_tensor.data<T>());
    });
    const DType split_dtype = config_.ragged[r].split_dtype;
    if (split_dtype == DT_INT32 && total > std::numeric_limits<int32_t>::max()) {
      return errors::InvalidArgument("ragged feature '", config_.ragged[r].key, "' has ", total,
                                     " values, too many for int32 row splits");
    }
    const int64_t num_splits = batched ? batch + 1 : 0;
    WEIR_ASSIGN_OR_RETURN(Tensor splits,
                          Tensor::Allocate(allocator, split_dtype, TensorShape({num_splits})));
    for (int64_t i = 0; i < num_splits; ++i) {
      const int64_t split = i == 0 ? 0 : values.ends[i - 1];
      if (split_dtype == DT_INT32) {
        splits.data<int32_t>()[i] = static_cast<int32_t>(split);
      } else {
        splits.data<int64_t>()[i] = split;
      }
    }
    out->ragged_values.push_back(std::move(value_tensor));
    out->ragged_splits.push_back(std::move(splits));
  }
  return Status::OK();
}

}  // namespace weir
