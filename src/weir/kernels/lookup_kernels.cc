// Kernels of the lookup-table family (ops/lookup_ops.cc). A table is a
// resource in the device's ResourceMgr: a hash map from int32, int64 or
// string keys to scalar int32, int64, float, double, bool or string values,
// guarded by a reader-writer lock (lookups run side by side). HashTableV2's
// table is filled once by an initializer; MutableHashTableV2's is changed by
// insert, remove and import. Semantics and error kinds are TensorFlow's.
#include <charconv>
#include <cstdlib>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "weir/base/file_system.h"
#include "weir/base/str_util.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/resource_handle.h"
#include "weir/framework/resource_mgr.h"
#include "weir/framework/resource_var.h"
#include "weir/kernels/all_kernels.h"

namespace weir {
namespace {

constexpr char kTableTypeName[] = "LookupTable";

class LookupTable : public ResourceBase {
 public:
  LookupTable(DType key_dtype, DType value_dtype, bool is_mutable)
      : key_dtype_(key_dtype), value_dtype_(value_dtype), is_mutable_(is_mutable) {}

  std::string DebugString() const override {
    return StrCat(is_mutable_ ? "MutableHashTable " : "HashTable ", key_dtype_, " -> ",
                  value_dtype_, ", ", size(), " entries");
  }
  DType key_dtype() const { return key_dtype_; }
  DType value_dtype() const { return value_dtype_; }
  bool is_mutable() const { return is_mutable_; }

  // `values` has the keys' shape; `default_value` is a scalar or has it too.
  virtual Status Find(const Tensor& keys, const Tensor& default_value, Tensor* values) const = 0;
  // Mutable tables: sets each key's value. Static ones: the initializer's
  // entries (FailedPrecondition for a key given two values).
  virtual Status Insert(const Tensor& keys, const Tensor& values) = 0;
  // An initializer's: the first fills the table; a later one must bring the
  // same entries (FailedPrecondition otherwise), as TensorFlow's.
  virtual Status Initialize(const Tensor& keys, const Tensor& values) = 0;
  virtual Status Remove(const Tensor& keys) = 0;
  virtual Status Import(const Tensor& keys, const Tensor& values) = 0;
  virtual void Export(Tensor* keys, Tensor* values) const = 0;
  virtual int64_t size() const = 0;

  // One entry of a text-file initializer (InitializeTableFromTextFileV2),
  // parsed as the table's types into element `index` of `keys`/`values`.
  virtual Status ParseEntry(std::string_view key, std::string_view value, Tensor* keys,
                            Tensor* values, int64_t index) const = 0;

 protected:
  const DType key_dtype_;
  const DType value_dtype_;
  const bool is_mutable_;
};

// Text of a key or value for errors.
template <typename T>
std::string Show(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return StrCat("'", v, "'");
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else {
    return StrCat(v);
  }
}

template <typename T>
Status ParseText(std::string_view text, T* out) {
  if constexpr (std::is_same_v<T, std::string>) {
    *out = std::string(text);
    return Status::OK();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (text == "true" || text == "1") *out = true;
    else if (text == "false" || text == "0") *out = false;
    else return errors::InvalidArgument("'", text, "' is not a bool");
    return Status::OK();
  } else if constexpr (std::is_floating_point_v<T>) {
    std::string copy(text);
    char* end = nullptr;
    const double v = std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size()) {
      return errors::InvalidArgument("'", text, "' is not a number");
    }
    *out = static_cast<T>(v);
    return Status::OK();
  } else {
    T v{};
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (error != std::errc() || end != text.data() + text.size()) {
      return errors::InvalidArgument("'", text,
                                     "' is not an integer of the table's key or "
                                     "value type");
    }
    *out = v;
    return Status::OK();
  }
}

template <typename K, typename V>
class HashTable final : public LookupTable {
 public:
  using LookupTable::LookupTable;

  Status Find(const Tensor& keys, const Tensor& default_value, Tensor* values) const override {
    const K* k = keys.data<K>();
    const V* d = default_value.data<V>();
    const bool per_key = default_value.shape().dims() != 0;
    V* out = values->data<V>();
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (!is_mutable_ && !initialized_) {
      return errors::FailedPrecondition(
          "Table not initialized: run its initializer "
          "(tables_initializer()) first");
    }
    for (int64_t i = 0, n = keys.NumElements(); i < n; ++i) {
      auto it = map_.find(k[i]);
      out[i] = it != map_.end() ? it->second : d[per_key ? i : 0];
    }
    return Status::OK();
  }

  Status Insert(const Tensor& keys, const Tensor& values) override {
    std::unique_lock<std::shared_mutex> lock(mu_);
    return InsertLocked(keys, values);
  }

  Status Initialize(const Tensor& keys, const Tensor& values) override {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (initialized_) return SameEntries(keys, values);
    std::unordered_map<K, V> saved;
    saved.swap(map_);
    Status status = InsertLocked(keys, values);
    if (!status.ok()) {
      map_.swap(saved);  // nothing half-done stays
      return status;
    }
    initialized_ = true;
    return Status::OK();
  }

  Status Remove(const Tensor& keys) override {
    const K* k = keys.data<K>();
    std::unique_lock<std::shared_mutex> lock(mu_);
    for (int64_t i = 0, n = keys.NumElements(); i < n; ++i) map_.erase(k[i]);
    return Status::OK();
  }

  Status Import(const Tensor& keys, const Tensor& values) override {
    std::unique_lock<std::shared_mutex> lock(mu_);
    map_.clear();
    return InsertLocked(keys, values);
  }

  void Export(Tensor* keys, Tensor* values) const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    *keys = Tensor(key_dtype_, TensorShape({static_cast<int64_t>(map_.size())}));
    *values = Tensor(value_dtype_, TensorShape({static_cast<int64_t>(map_.size())}));
    K* k = keys->data<K>();
    V* v = values->data<V>();
    for (const auto& [key, value] : map_) {
      *k++ = key;
      *v++ = value;
    }
  }

  int64_t size() const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return static_cast<int64_t>(map_.size());
  }

  Status ParseEntry(std::string_view key, std::string_view value, Tensor* keys, Tensor* values,
                    int64_t index) const override {
    K k{};
    V v{};
    WEIR_RETURN_IF_ERROR(ParseText(key, &k).WithContext("the key"));
    WEIR_RETURN_IF_ERROR(ParseText(value, &v).WithContext("the value"));
    keys->data<K>()[index] = k;
    values->data<V>()[index] = v;
    return Status::OK();
  }

 private:
  // A static table's entries must agree (a key twice with two values is an
  // error); a mutable one's later value wins. REQUIRES: mu_ held.
  Status InsertLocked(const Tensor& keys, const Tensor& values) {
    const K* k = keys.data<K>();
    const V* v = values.data<V>();
    for (int64_t i = 0, n = keys.NumElements(); i < n; ++i) {
      if (is_mutable_) {
        map_[k[i]] = v[i];
        continue;
      }
      auto [it, inserted] = map_.emplace(k[i], v[i]);
      if (!inserted && !(it->second == v[i])) {
        return errors::FailedPrecondition("HashTable has different value for same key. Key ",
                                          Show(k[i]), " has ", Show(it->second),
                                          " and trying to add value ", Show(v[i]));
      }
    }
    return Status::OK();
  }

  // REQUIRES: mu_ held.
  Status SameEntries(const Tensor& keys, const Tensor& values) const {
    const K* k = keys.data<K>();
    const V* v = values.data<V>();
    const int64_t n = keys.NumElements();
    bool same = n == static_cast<int64_t>(map_.size());
    for (int64_t i = 0; same && i < n; ++i) {
      auto it = map_.find(k[i]);
      same = it != map_.end() && it->second == v[i];
    }
    if (same) return Status::OK();
    return errors::FailedPrecondition("Table was already initialized with different data.");
  }

  mutable std::shared_mutex mu_;
  std::unordered_map<K, V> map_;  // guarded by mu_
  bool initialized_ = false;      // guarded by mu_
};

template <typename K>
StatusOr<std::shared_ptr<LookupTable>> MakeTableWithKey(DType key, DType value, bool is_mutable) {
  switch (value) {
    case DT_INT32:
      return std::shared_ptr<LookupTable>(new HashTable<K, int32_t>(key, value, is_mutable));
    case DT_INT64:
      return std::shared_ptr<LookupTable>(new HashTable<K, int64_t>(key, value, is_mutable));
    case DT_FLOAT:
      return std::shared_ptr<LookupTable>(new HashTable<K, float>(key, value, is_mutable));
    case DT_DOUBLE:
      return std::shared_ptr<LookupTable>(new HashTable<K, double>(key, value, is_mutable));
    case DT_BOOL:
      return std::shared_ptr<LookupTable>(new HashTable<K, bool>(key, value, is_mutable));
    case DT_STRING:
      return std::shared_ptr<LookupTable>(new HashTable<K, std::string>(key, value, is_mutable));
    default: return errors::Unimplemented("no lookup table with values of ", value);
  }
}

StatusOr<std::shared_ptr<LookupTable>> MakeTable(DType key, DType value, bool is_mutable) {
  switch (key) {
    case DT_INT32: return MakeTableWithKey<int32_t>(key, value, is_mutable);
    case DT_INT64: return MakeTableWithKey<int64_t>(key, value, is_mutable);
    case DT_STRING: return MakeTableWithKey<std::string>(key, value, is_mutable);
    default: return errors::Unimplemented("no lookup table with keys of ", key);
  }
}

// HashTableV2 and MutableHashTableV2. shared_name empty: a table private to
// the node (per session, in the session's container), or shared under the
// node's name with use_node_name_sharing, as TensorFlow's.
template <bool kMutable>
class TableHandleOp final : public OpKernel {
 public:
  explicit TableHandleOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("container", &container_));
    context->SetStatus(context->GetAttr("shared_name", &shared_name_));
    context->SetStatus(context->GetAttr("key_dtype", &key_dtype_));
    context->SetStatus(context->GetAttr("value_dtype", &value_dtype_));
    bool node_name_sharing = false;
    context->SetStatus(context->GetAttr("use_node_name_sharing", &node_name_sharing));
    name_ = !shared_name_.empty() ? shared_name_ : node_name_sharing ? name() : "_" + name();
  }

  void Compute(OpKernelContext* context) override {
    const std::string container =
        container_.empty() ? std::string(context->default_container()) : container_;
    auto table = context->resource_manager()->LookupOrCreate<LookupTable>(
        container, name_, [&] { return MakeTable(key_dtype_, value_dtype_, kMutable); });
    OP_REQUIRES_OK(context, table.status().WithContext(StrCat("table '", name_, "'")));
    const LookupTable& t = **table;
    if (t.key_dtype() != key_dtype_ || t.value_dtype() != value_dtype_ ||
        t.is_mutable() != kMutable) {
      context->SetStatus(
          errors::InvalidArgument("table '", name_, "' in container '", container, "' exists as a ",
                                  t.is_mutable() ? "mutable" : "static", " table of ",
                                  t.key_dtype(), " -> ", t.value_dtype(), ", but ", type_string(),
                                  " asks for ", key_dtype_, " -> ", value_dtype_));
      return;
    }
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    out->scalar<ResourceHandle>() =
        ResourceHandle(context->device()->name(), container, name_, kTableTypeName);
  }

 private:
  std::string container_;
  std::string shared_name_;
  std::string name_;
  DType key_dtype_ = DT_INVALID;
  DType value_dtype_ = DT_INVALID;
};

StatusOr<std::shared_ptr<LookupTable>> TableFromInput(OpKernelContext* context) {
  WEIR_ASSIGN_OR_RETURN(const ResourceHandle* handle, HandleFromInput(context, 0, kTableTypeName));
  auto table =
      context->resource_manager()->Lookup<LookupTable>(handle->container(), handle->name());
  if (!table.ok()) {
    return errors::NotFound("lookup table '", handle->name(), "' (container '", handle->container(),
                            "') does not exist on ", context->device()->name(),
                            ": its creating op has not run in this session, or its container "
                            "was reset");
  }
  return table;
}

// The keys (input `k`) and values (input `v`, or none) an op gives the
// table must have its dtypes; values must have the keys' shape.
Status CheckEntries(OpKernelContext* context, const LookupTable& table, int k, int v) {
  const Tensor& keys = context->input(k);
  if (keys.dtype() != table.key_dtype()) {
    return errors::InvalidArgument("the table's keys are ", table.key_dtype(),
                                   ", but the keys "
                                   "given are ",
                                   keys.dtype(), " ", keys.shape());
  }
  if (v < 0) return Status::OK();
  const Tensor& values = context->input(v);
  if (values.dtype() != table.value_dtype()) {
    return errors::InvalidArgument("the table's values are ", table.value_dtype(),
                                   ", but the values given are ", values.dtype(), " ",
                                   values.shape());
  }
  if (values.shape() != keys.shape()) {
    return errors::InvalidArgument("keys and values must have the same shape: keys ", keys.shape(),
                                   ", values ", values.shape());
  }
  return Status::OK();
}

// Names the op and node in a table op's error.
#define TABLE_REQUIRES_OK(context, expr) \
  OP_REQUIRES_OK(context, (expr).WithContext(StrCat(type_string(), " '", name(), "'")))

class FindOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    auto table = TableFromInput(context);
    TABLE_REQUIRES_OK(context, table.status());
    TABLE_REQUIRES_OK(context, CheckEntries(context, **table, 1, -1));
    const Tensor& keys = context->input(1);
    const Tensor& fallback = context->input(2);
    if (fallback.dtype() != (*table)->value_dtype() ||
        (fallback.shape().dims() != 0 && fallback.shape() != keys.shape())) {
      TABLE_REQUIRES_OK(context, errors::InvalidArgument(
                                     "default_value must be a scalar ", (*table)->value_dtype(),
                                     " or have the keys' shape ", keys.shape(), "; got ",
                                     fallback.dtype(), " ", fallback.shape()));
    }
    Tensor* values;
    OP_REQUIRES_OK(context, context->allocate_output(0, keys.shape(), &values));
    TABLE_REQUIRES_OK(context, (*table)->Find(keys, fallback, values));
  }
};

// Insert (kInsert), Import (kImport), InitializeTableV2 (kInitialize).
enum class Fill { kInsert, kImport, kInitialize };

template <Fill kFill>
class FillOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    auto table = TableFromInput(context);
    TABLE_REQUIRES_OK(context, table.status());
    LookupTable& t = **table;
    TABLE_REQUIRES_OK(context, CheckEntries(context, t, 1, 2));
    // An import into a static table is its initializer (TF 2.x's
    // KeyValueTensorInitializer writes LookupTableImportV2).
    const bool initialize =
        kFill == Fill::kInitialize || (kFill == Fill::kImport && !t.is_mutable());
    if (initialize == t.is_mutable()) {
      TABLE_REQUIRES_OK(context,
                        errors::InvalidArgument(
                            initialize ? "a mutable table is filled by insert, not initialized"
                                       : "a static table (HashTableV2) is filled only by its "
                                         "initializer"));
    }
    const Tensor& keys = context->input(1);
    const Tensor& values = context->input(2);
    if (initialize) {
      TABLE_REQUIRES_OK(context, t.Initialize(keys, values));
    } else if (kFill == Fill::kImport) {
      TABLE_REQUIRES_OK(context, t.Import(keys, values));
    } else {
      TABLE_REQUIRES_OK(context, t.Insert(keys, values));
    }
  }
};

class RemoveOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    auto table = TableFromInput(context);
    TABLE_REQUIRES_OK(context, table.status());
    TABLE_REQUIRES_OK(context, CheckEntries(context, **table, 1, -1));
    if (!(*table)->is_mutable()) {
      TABLE_REQUIRES_OK(context, errors::InvalidArgument("a static table has no remove"));
    }
    TABLE_REQUIRES_OK(context, (*table)->Remove(context->input(1)));
  }
};

class SizeOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    auto table = TableFromInput(context);
    TABLE_REQUIRES_OK(context, table.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    out->scalar<int64_t>() = (*table)->size();
  }
};

class ExportOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    auto table = TableFromInput(context);
    TABLE_REQUIRES_OK(context, table.status());
    Tensor keys, values;
    (*table)->Export(&keys, &values);
    context->set_output(0, std::move(keys));
    context->set_output(1, std::move(values));
  }
};

// InitializeTableFromTextFileV2's column indexes below 0.
constexpr int64_t kWholeLine = -2;
constexpr int64_t kLineNumber = -1;

class InitializeFromTextFileOp final : public OpKernel {
 public:
  explicit InitializeFromTextFileOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("key_index", &key_index_));
    context->SetStatus(context->GetAttr("value_index", &value_index_));
    context->SetStatus(context->GetAttr("vocab_size", &vocab_size_));
    context->SetStatus(context->GetAttr("delimiter", &delimiter_));
    context->SetStatus(context->GetAttr("offset", &offset_));
    if (delimiter_.empty()) {
      context->SetStatus(errors::InvalidArgument("delimiter must not be empty"));
    }
  }

  void Compute(OpKernelContext* context) override {
    auto table = TableFromInput(context);
    TABLE_REQUIRES_OK(context, table.status());
    LookupTable& t = **table;
    const Tensor& filename = context->input(1);
    if (filename.dtype() != DT_STRING || filename.shape().dims() != 0) {
      TABLE_REQUIRES_OK(context, errors::InvalidArgument("filename must be a scalar string, got ",
                                                         filename.dtype(), " ", filename.shape()));
    }
    const std::string& path = filename.scalar<std::string>();
    TABLE_REQUIRES_OK(context, Check(t));
    StatusOr<std::string> text = ReadFileToString(path);
    TABLE_REQUIRES_OK(context, text.status());
    std::vector<std::string_view> lines;
    std::string_view rest = *text;
    while (!rest.empty() && (vocab_size_ < 0 || static_cast<int64_t>(lines.size()) < vocab_size_)) {
      const size_t end = rest.find('\n');
      std::string_view line = rest.substr(0, end);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines.push_back(line);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
    if (vocab_size_ >= 0 && static_cast<int64_t>(lines.size()) != vocab_size_) {
      TABLE_REQUIRES_OK(
          context, errors::InvalidArgument("Invalid vocab_size in ", path,
                                           ": expected: ", vocab_size_, ", got: ", lines.size()));
    }
    const int64_t n = static_cast<int64_t>(lines.size());
    Tensor keys(t.key_dtype(), TensorShape({n}));
    Tensor values(t.value_dtype(), TensorShape({n}));
    for (int64_t i = 0; i < n; ++i) {
      std::vector<std::string_view> columns = Split(lines[i]);
      std::string number = StrCat(i + offset_);
      auto field = [&](int64_t index, std::string_view* out) -> Status {
        if (index == kWholeLine) {
          *out = lines[i];
        } else if (index == kLineNumber) {
          *out = number;
        } else if (index >= static_cast<int64_t>(columns.size())) {
          return errors::InvalidArgument("Invalid number of columns in ", path, " line ", i, " (",
                                         lines[i], ") : expected ", index + 1, " got ",
                                         columns.size());
        } else {
          *out = columns[index];
        }
        return Status::OK();
      };
      std::string_view key, value;
      Status status = field(key_index_, &key);
      if (status.ok()) status = field(value_index_, &value);
      if (status.ok()) {
        status = t.ParseEntry(key, value, &keys, &values, i).WithContext(StrCat(path, " line ", i));
      }
      TABLE_REQUIRES_OK(context, status);
    }
    TABLE_REQUIRES_OK(context, t.Initialize(keys, values).WithContext(path));
  }

 private:
  Status Check(const LookupTable& t) const {
    if (t.is_mutable()) {
      return errors::InvalidArgument("a mutable table is filled by insert, not initialized");
    }
    // The line number is an int64; a whole line or a column is text that
    // parses as the table's type.
    if (key_index_ == kLineNumber && t.key_dtype() != DT_INT64) {
      return errors::InvalidArgument("keys from the line number need an int64 table, not ",
                                     t.key_dtype());
    }
    if (value_index_ == kLineNumber && t.value_dtype() != DT_INT64) {
      return errors::InvalidArgument("values from the line number need an int64 table, not ",
                                     t.value_dtype());
    }
    if (key_index_ == kWholeLine && t.key_dtype() != DT_STRING) {
      return errors::InvalidArgument("keys from the whole line need a string table, not ",
                                     t.key_dtype());
    }
    if (value_index_ == kWholeLine && t.value_dtype() != DT_STRING) {
      return errors::InvalidArgument("values from the whole line need a string table, not ",
                                     t.value_dtype());
    }
    return Status::OK();
  }

  std::vector<std::string_view> Split(std::string_view line) const {
    std::vector<std::string_view> columns;
    size_t start = 0;
    while (true) {
      const size_t at = line.find(delimiter_, start);
      columns.push_back(line.substr(start, at == std::string_view::npos ? at : at - start));
      if (at == std::string_view::npos) return columns;
      start = at + delimiter_.size();
    }
  }

  int64_t key_index_ = 0;
  int64_t value_index_ = 0;
  int64_t vocab_size_ = -1;
  std::string delimiter_;
  int64_t offset_ = 0;
};

#undef TABLE_REQUIRES_OK

}  // namespace

void RegisterLookupKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("HashTableV2"), MakeKernel<TableHandleOp<false>>);
  registry->Register(KernelBuilder("MutableHashTableV2"), MakeKernel<TableHandleOp<true>>);
  registry->Register(KernelBuilder("LookupTableFindV2"), MakeKernel<FindOp>);
  registry->Register(KernelBuilder("LookupTableInsertV2"), MakeKernel<FillOp<Fill::kInsert>>);
  registry->Register(KernelBuilder("LookupTableImportV2"), MakeKernel<FillOp<Fill::kImport>>);
  registry->Register(KernelBuilder("InitializeTableV2"), MakeKernel<FillOp<Fill::kInitialize>>);
  registry->Register(KernelBuilder("LookupTableRemoveV2"), MakeKernel<RemoveOp>);
  registry->Register(KernelBuilder("LookupTableSizeV2"), MakeKernel<SizeOp>);
  registry->Register(KernelBuilder("LookupTableExportV2"), MakeKernel<ExportOp>);
  registry->Register(KernelBuilder("InitializeTableFromTextFileV2"),
                     MakeKernel<InitializeFromTextFileOp>);
}

}  // namespace weir
