// DecodeRaw, DecodeCSV and StringToNumber: strings to numbers, with
// TensorFlow's semantics and errors that name the element, record and field.
#include <algorithm>
#include <cstring>

#include "weir/base/checked_math.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/number_parsing.h"
#include "weir/kernels/parsing_kernels.h"

namespace weir {
namespace {

// Calls fn.template operator()<T>() for the number types DecodeCSV and
// StringToNumber produce.
template <typename Fn>
bool DispatchParsedNumber(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_FLOAT: fn.template operator()<float>(); return true;
    case DT_DOUBLE: fn.template operator()<double>(); return true;
    case DT_INT32: fn.template operator()<int32_t>(); return true;
    case DT_INT64: fn.template operator()<int64_t>(); return true;
    case DT_UINT32: fn.template operator()<uint32_t>(); return true;
    case DT_UINT64: fn.template operator()<uint64_t>(); return true;
    default: return false;
  }
}

class DecodeRawOp : public OpKernel {
 public:
  explicit DecodeRawOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("out_type", &out_type_));
    context->SetStatus(context->GetAttr("little_endian", &little_endian_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const std::string* strings = input.data<std::string>();
    const int64_t count = input.NumElements();
    const int64_t size = count == 0 ? 0 : static_cast<int64_t>(strings[0].size());
    for (int64_t i = 1; i < count; ++i) {
      OP_REQUIRES(
          context, static_cast<int64_t>(strings[i].size()) == size,
          errors::InvalidArgument("DecodeRaw: all strings must have the same length, "
                                  "but element 0 has ",
                                  size, " bytes and element ", i, " has ", strings[i].size()));
    }
    const int64_t element_size = static_cast<int64_t>(DTypeSize(out_type_));
    OP_REQUIRES(
        context, size % element_size == 0,
        errors::InvalidArgument("DecodeRaw: the strings have ", size, " bytes, not a multiple of ",
                                element_size, " (the size of ", out_type_, ")"));
    const int64_t width = size / element_size;
    TensorShape shape = input.shape();
    OP_REQUIRES_OK(context, shape.AddDimWithStatus(width));
    Tensor* output;
    OP_REQUIRES_OK(context, context->allocate_output(0, shape, &output));
    char* out = static_cast<char*>(output->raw_data());
    if (size > 0) {
      for (int64_t i = 0; i < count; ++i) std::memcpy(out + i * size, strings[i].data(), size);
    }
    // Complex numbers swap their real and imaginary parts separately.
    const int64_t swap_unit = IsComplexDType(out_type_) ? element_size / 2 : element_size;
    if (!little_endian_ && swap_unit > 1) {
      for (int64_t at = 0; at < count * size; at += swap_unit)
        std::reverse(out + at, out + at + swap_unit);
    }
    if (out_type_ == DT_BOOL) {  // any nonzero byte is true
      bool* values = output->data<bool>();
      for (int64_t i = 0; i < count * width; ++i) values[i] = out[i] != 0;
    }
  }

 private:
  DType out_type_ = DT_FLOAT;
  bool little_endian_ = true;
};

class StringToNumberOp : public OpKernel {
 public:
  explicit StringToNumberOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("out_type", &out_type_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    Tensor* output;
    OP_REQUIRES_OK(context, context->allocate_output(0, input.shape(), &output));
    const std::string* strings = input.data<std::string>();
    Status status;
    DispatchParsedNumber(out_type_, [&]<typename T>() {
      T* values = output->data<T>();
      for (int64_t i = 0; i < input.NumElements(); ++i) {
        if (!ParseNumber(strings[i], &values[i])) {
          status = errors::InvalidArgument("StringToNumber: element ", i, " '", strings[i],
                                           "' is not a valid ", out_type_);
          return;
        }
      }
    });
    OP_REQUIRES_OK(context, status);
  }

 private:
  DType out_type_ = DT_FLOAT;
};

class DecodeCSVOp : public OpKernel {
 public:
  explicit DecodeCSVOp(OpKernelConstruction* context) : OpKernel(context) {
    std::string delim;
    context->SetStatus(context->GetAttr("OUT_TYPE", &out_types_));
    context->SetStatus(context->GetAttr("field_delim", &delim));
    context->SetStatus(context->GetAttr("use_quote_delim", &use_quote_delim_));
    context->SetStatus(context->GetAttr("na_value", &na_value_));
    context->SetStatus(context->GetAttr("select_cols", &select_cols_));
    if (!context->status().ok()) return;
    if (delim.size() != 1) {
      context->SetStatus(
          errors::InvalidArgument("DecodeCSV: field_delim must be one character, "
                                  "not '",
                                  delim, "'"));
      return;
    }
    delim_ = delim[0];
    for (size_t i = 0; i < select_cols_.size(); ++i) {
      if (select_cols_[i] < 0 || (i > 0 && select_cols_[i] <= select_cols_[i - 1])) {
        context->SetStatus(errors::InvalidArgument(
            "DecodeCSV: select_cols must be non-negative and strictly increasing, but "
            "select_cols[",
            i, "] is ", select_cols_[i]));
        return;
      }
    }
    if (!select_cols_.empty() && select_cols_.size() != out_types_.size()) {
      context->SetStatus(errors::InvalidArgument("DecodeCSV: select_cols has ", select_cols_.size(),
                                                 " columns but there are ", out_types_.size(),
                                                 " record defaults"));
    }
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& records = context->input(0);
    const int num_fields = static_cast<int>(out_types_.size());
    for (int f = 0; f < num_fields; ++f) {
      const Tensor& def = context->input(1 + f);
      OP_REQUIRES(context, def.dims() <= 1 && def.NumElements() <= 1,
                  errors::InvalidArgument("DecodeCSV: record_defaults[", f,
                                          "] must be a scalar or a vector of at most one "
                                          "element, but has shape ",
                                          def.shape()));
    }
    std::vector<Tensor*> outputs(num_fields);
    for (int f = 0; f < num_fields; ++f) {
      OP_REQUIRES_OK(context, context->allocate_output(f, records.shape(), &outputs[f]));
    }
    std::vector<std::string> fields;
    for (int64_t r = 0; r < records.NumElements(); ++r) {
      OP_REQUIRES_OK(context, SplitRecord(records.data<std::string>()[r], r, &fields));
      OP_REQUIRES(context, static_cast<int>(fields.size()) == num_fields,
                  errors::InvalidArgument("DecodeCSV: record ", r, " has ", fields.size(),
                                          " fields but ", num_fields, " were expected"));
      for (int f = 0; f < num_fields; ++f) {
        OP_REQUIRES_OK(context, Convert(fields[f], context->input(1 + f), r, f, outputs[f]));
      }
    }
  }

 private:
  // Field `f` of record `r` into element r of `output`: an empty or NA field
  // takes the default.
  Status Convert(const std::string& field, const Tensor& def, int64_t r, int f,
                 Tensor* output) const {
    const bool missing = field.empty() || field == na_value_;
    if (missing && def.NumElements() == 0) {
      return errors::InvalidArgument("DecodeCSV: field ", f, " of record ", r,
                                     " is missing and has no default (it is required)");
    }
    const DType dtype = out_types_[f];
    if (dtype == DT_STRING) {
      output->data<std::string>()[r] = missing ? def.data<std::string>()[0] : field;
      return Status::OK();
    }
    Status status;
    DispatchParsedNumber(dtype, [&]<typename T>() {
      if (missing) {
        output->data<T>()[r] = def.data<T>()[0];
      } else if (!ParseNumber(field, &output->data<T>()[r])) {
        status = errors::InvalidArgument("DecodeCSV: field ", f, " of record ", r, " '", field,
                                         "' is not a valid ", dtype);
      }
    });
    return status;
  }

  // The fields of `record` (the selected ones, with select_cols): fields
  // are separated by delim_; with use_quote_delim_, a field that starts
  // with '"' ends with '"' before a delimiter or the end, "" standing for a
  // quote. CR and LF at the start of a field are skipped; elsewhere outside
  // quotes they are errors, as are quotes inside an unquoted field.
  Status SplitRecord(const std::string& record, int64_t r, std::vector<std::string>* fields) const {
    fields->clear();
    const size_t size = record.size();
    size_t at = 0;
    int64_t column = 0;
    size_t selected = 0;
    auto wanted = [&]() {
      return select_cols_.empty() ||
             (selected < select_cols_.size() && select_cols_[selected] == column);
    };
    auto error = [&](std::string_view what) {
      return errors::InvalidArgument("DecodeCSV: record ", r, ", field ", column, ": ", what);
    };
    while (at < size) {
      if (record[at] == '\n' || record[at] == '\r') {
        ++at;
        continue;
      }
      const bool keep = wanted();
      std::string field;
      if (use_quote_delim_ && record[at] == '"') {
        ++at;
        while (at + 1 < size && !(record[at] == '"' && record[at + 1] == delim_)) {
          if (record[at] != '"') {
            if (keep) field += record[at];
            ++at;
            continue;
          }
          if (record[at + 1] != '"') return error("a quote inside a quoted field must be doubled");
          if (keep) field += '"';
          at += 2;
        }
        if (at >= size || record[at] != '"') {
          return error("a quoted field must end with a quote before the delimiter or the end");
        }
        at += 2;  // the quote and the delimiter
      } else {
        while (at < size && record[at] != delim_) {
          const char c = record[at];
          if ((use_quote_delim_ && c == '"') || c == '\n' || c == '\r') {
            return error("an unquoted field cannot hold quotes, CR or LF");
          }
          if (keep) field += c;
          ++at;
        }
        ++at;  // the delimiter
      }
      ++column;
      if (keep) {
        fields->push_back(std::move(field));
        ++selected;
        if (!select_cols_.empty() && selected == select_cols_.size()) return Status::OK();
      }
    }
    // A record that ends with the delimiter ends with an empty field.
    if (size > 0 && record.back() == delim_ && wanted()) fields->emplace_back();
    return Status::OK();
  }

  std::vector<DType> out_types_;
  char delim_ = ',';
  bool use_quote_delim_ = true;
  std::string na_value_;
  std::vector<int64_t> select_cols_;
};

}  // namespace

void RegisterDecodeKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("DecodeRaw"), MakeKernel<DecodeRawOp>);
  registry->Register(KernelBuilder("StringToNumber"), MakeKernel<StringToNumberOp>);
  registry->Register(KernelBuilder("DecodeCSV"), MakeKernel<DecodeCSVOp>);
}

}  // namespace weir
