#include "weir/framework/window_shape.h"

#include <algorithm>
#include <string>
#include <vector>

#include "weir/base/checked_math.h"
#include "weir/base/str_util.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/tensor.h"

namespace weir {
namespace {

std::string ListString(const std::vector<int64_t>& values) {
  return StrCat("[", StrJoin(values, ","), "]");
}

// ceil(a / b) for a >= 0, b > 0, without the a + b - 1 that overflows for
// strides near 2^63.
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

StatusOr<ImageLayout> GetLayout(const AttrMap& attrs) {
  ImageLayout layout;
  auto it = attrs.find("data_format");
  if (it == attrs.end()) return layout;
  std::string format;
  WEIR_RETURN_IF_ERROR(GetAttr(attrs, "data_format", &format));
  if (format == "NCHW") {
    layout.channels_last = false;
  } else if (format != "NHWC") {
    return errors::Unimplemented("data_format '", format, "' is not supported (NHWC or NCHW)");
  }
  return layout;
}

// A list attr of four entries, one per dim in the layout's order, that
// must be 1 in the batch and channel dims and positive elsewhere. Returns
// the {rows, cols} entries.
StatusOr<std::array<int64_t, 2>> GetSpatialList(const AttrMap& attrs, const char* name,
                                                const ImageLayout& layout) {
  std::vector<int64_t> values;
  WEIR_RETURN_IF_ERROR(GetAttr(attrs, name, &values));
  if (values.size() != 4) {
    return errors::InvalidArgument(name, " ", ListString(values),
                                   " must have 4 entries, one per dim of ", layout.name());
  }
  if (values[layout.batch()] != 1 || values[layout.channels()] != 1) {
    return errors::InvalidArgument(name, " ", ListString(values),
                                   " must be 1 in the batch and channel dims (data_format ",
                                   layout.name(), ")");
  }
  const int64_t rows = values[layout.rows()], cols = values[layout.cols()];
  if (rows < 1 || cols < 1) {
    return errors::InvalidArgument(name, " ", ListString(values), " must be positive");
  }
  return std::array<int64_t, 2>{rows, cols};
}

StatusOr<Padding> GetPadding(const AttrMap& attrs) {
  std::string padding;
  WEIR_RETURN_IF_ERROR(GetAttr(attrs, "padding", &padding));
  if (padding == "SAME") return Padding::kSame;
  if (padding == "VALID") return Padding::kValid;
  if (padding == "EXPLICIT") return Padding::kExplicit;
  return errors::InvalidArgument("padding '", padding, "' must be SAME, VALID or EXPLICIT");
}

Status GetExplicitPaddings(const AttrMap& attrs, Window2DAttrs* out) {
  std::vector<int64_t> paddings;
  if (attrs.count("explicit_paddings")) {
    WEIR_RETURN_IF_ERROR(GetAttr(attrs, "explicit_paddings", &paddings));
  }
  if (out->padding != Padding::kExplicit) {
    if (!paddings.empty()) {
      return errors::InvalidArgument("explicit_paddings ", ListString(paddings),
                                     " must be empty unless padding is EXPLICIT");
    }
    return Status::OK();
  }
  const ImageLayout& layout = out->layout;
  if (paddings.size() != 8) {
    return errors::InvalidArgument("explicit_paddings ", ListString(paddings),
                                   " must have 8 entries, a (before, after) pair per dim of ",
                                   layout.name());
  }
  for (int64_t p : paddings) {
    if (p < 0) {
      return errors::InvalidArgument("explicit_paddings ", ListString(paddings),
                                     " must not be negative");
    }
  }
  for (int dim : {layout.batch(), layout.channels()}) {
    if (paddings[2 * dim] != 0 || paddings[2 * dim + 1] != 0) {
      return errors::InvalidArgument("explicit_paddings ", ListString(paddings),
                                     " must be 0 in the batch and channel dims (data_format ",
                                     layout.name(), ")");
    }
  }
  out->explicit_paddings = {paddings[2 * layout.rows()], paddings[2 * layout.rows() + 1],
                            paddings[2 * layout.cols()], paddings[2 * layout.cols() + 1]};
  return Status::OK();
}

StatusOr<Window2DAttrs> GetWindowAttrs(const AttrMap& attrs, bool pooling) {
  Window2DAttrs out;
  WEIR_ASSIGN_OR_RETURN(out.layout, GetLayout(attrs));
  WEIR_ASSIGN_OR_RETURN(out.strides, GetSpatialList(attrs, "strides", out.layout));
  if (pooling) {
    WEIR_ASSIGN_OR_RETURN(out.window, GetSpatialList(attrs, "ksize", out.layout));
  } else if (attrs.count("dilations")) {
    WEIR_ASSIGN_OR_RETURN(out.dilations, GetSpatialList(attrs, "dilations", out.layout));
  }
  WEIR_ASSIGN_OR_RETURN(out.padding, GetPadding(attrs));
  WEIR_RETURN_IF_ERROR(GetExplicitPaddings(attrs, &out));
  if (pooling && out.padding == Padding::kExplicit) {
    // A window made only of padding has no maximum and no average.
    const auto& p = out.explicit_paddings;
    if (p[0] >= out.window[0] || p[1] >= out.window[0] || p[2] >= out.window[1] ||
        p[3] >= out.window[1]) {
      return errors::InvalidArgument(
          "explicit paddings (top ", p[0], ", bottom ", p[1], ", left ", p[2], ", right ", p[3],
          ") must be smaller than the pooling window ", out.window[0], "x", out.window[1]);
    }
  }
  return out;
}

}  // namespace

StatusOr<std::array<int64_t, 2>> PartialSpatialOutput(const Window2DAttrs& attrs,
                                                      const PartialShape& input,
                                                      std::array<int64_t, 2> window) {
  std::array<int64_t, 2> out = {PartialShape::kUnknown, PartialShape::kUnknown};
  const int dims[2] = {attrs.layout.rows(), attrs.layout.cols()};
  const char* names[2] = {"rows", "cols"};
  for (int i = 0; i < 2; ++i) {
    const int64_t size = input.dim(dims[i]);
    if (size < 0) continue;
    if (window[i] < 0) {
      // SAME's output size does not depend on the window.
      if (attrs.padding == Padding::kSame) out[i] = CeilDiv(size, attrs.strides[i]);
      continue;
    }
    WEIR_ASSIGN_OR_RETURN(WindowDim d, ComputeWindowDim(names[i], size, window[i], attrs.strides[i],
                                                        attrs.dilations[i], attrs.padding,
                                                        attrs.explicit_paddings[2 * i],
                                                        attrs.explicit_paddings[2 * i + 1]));
    out[i] = d.output;
  }
  return out;
}

PartialShape ImageShape(const ImageLayout& layout, int64_t batch, int64_t rows, int64_t cols,
                        int64_t depth) {
  std::vector<int64_t> dims(4);
  dims[layout.batch()] = batch;
  dims[layout.rows()] = rows;
  dims[layout.cols()] = cols;
  dims[layout.channels()] = depth;
  return PartialShape(std::move(dims));
}

StatusOr<WindowDim> ComputeWindowDim(const char* what, int64_t input, int64_t window,
                                     int64_t stride, int64_t dilation, Padding padding,
                                     int64_t explicit_before, int64_t explicit_after) {
  WindowDim d;
  d.input = input;
  d.window = window;
  d.stride = stride;
  d.dilation = dilation;
  if (window < 1) {
    return errors::InvalidArgument("the window has ", window, " ", what, "; it must be positive");
  }
  if (stride < 1 || dilation < 1 || input < 0 || explicit_before < 0 || explicit_after < 0) {
    return errors::InvalidArgument("the window over ", input, " ", what, " has stride ", stride,
                                   ", dilation ", dilation, " and explicit paddings ",
                                   explicit_before, " and ", explicit_after,
                                   "; stride and dilation must be positive, the rest not "
                                   "negative");
  }
  // Every sum below is checked: strides, dilations and paddings come from
  // attrs and may be anything up to 2^63 - 1.
  const std::string context = StrCat("the window's ", what, " (size ", window, ", stride ", stride,
                                     ", dilation ", dilation, ", input ", input, ")");
  int64_t effective;
  WEIR_RETURN_IF_ERROR(CheckedMultiply(window - 1, dilation, &effective, context));
  WEIR_RETURN_IF_ERROR(CheckedAdd(effective, 1, &effective, context));
  switch (padding) {
    case Padding::kValid:
      if (input < effective) {
        return errors::InvalidArgument(
            "the window (", window, " ", what, ", dilation ", dilation, ", effective size ",
            effective, ") is larger than the input's ", input, " ", what, " with VALID padding");
      }
      d.output = (input - effective) / stride + 1;
      break;
    case Padding::kSame: {
      d.output = CeilDiv(input, stride);
      // (output - 1) * stride <= input - 1, so only adding the window can
      // overflow.
      int64_t covered;
      WEIR_RETURN_IF_ERROR(CheckedAdd((d.output - 1) * stride, effective, &covered, context));
      const int64_t needed = std::max<int64_t>(0, covered - input);
      d.pad_before = needed / 2;
      d.pad_after = needed - d.pad_before;
      break;
    }
    case Padding::kExplicit: {
      int64_t padded;
      WEIR_RETURN_IF_ERROR(CheckedAdd(input, explicit_before, &padded, context));
      WEIR_RETURN_IF_ERROR(CheckedAdd(padded, explicit_after, &padded, context));
      if (padded < effective) {
        return errors::InvalidArgument(
            "the window (", window, " ", what, ", dilation ", dilation, ", effective size ",
            effective, ") is larger than the input's ", input, " ", what,
            " plus explicit paddings ", explicit_before, " and ", explicit_after);
      }
      d.output = (padded - effective) / stride + 1;
      d.pad_before = explicit_before;
      d.pad_after = explicit_after;
      break;
    }
  }
  return d;
}

StatusOr<Window2DAttrs> GetConv2DAttrs(const AttrMap& attrs) {
  return GetWindowAttrs(attrs, /*pooling=*/false);
}

StatusOr<Window2DAttrs> GetPool2DAttrs(const AttrMap& attrs) {
  return GetWindowAttrs(attrs, /*pooling=*/true);
}

TensorShape Window2DDims::input_shape() const {
  return ImageShape(layout, batch, rows.input, cols.input, in_depth).ToTensorShape();
}

TensorShape Window2DDims::output_shape() const {
  return ImageShape(layout, batch, rows.output, cols.output, out_depth).ToTensorShape();
}

namespace {

// The output of a windowed op: its element count must fit (explicit
// paddings can make each spatial dim nearly 2^63).
Status CheckOutputShape(const Window2DDims& dims) {
  const int64_t out[] = {dims.batch, dims.rows.output, dims.cols.output, dims.out_depth};
  return CheckedElementCount(out, "the output's [batch, rows, cols, depth]").status();
}

}  // namespace

TensorShape Window2DDims::filter_shape() const {
  return TensorShape({rows.window, cols.window, in_depth, out_depth});
}

StatusOr<Window2DDims> ComputeConv2DDims(const Window2DAttrs& attrs, const TensorShape& input,
                                         const TensorShape& filter) {
  if (input.rank() != 4 || filter.rank() != 4) {
    return errors::InvalidArgument("input ", input, " and filter ", filter,
                                   " must both have rank 4 (input ", attrs.layout.name(),
                                   ", filter [rows, cols, in_channels, out_channels])");
  }
  const ImageLayout& layout = attrs.layout;
  Window2DDims dims;
  dims.layout = layout;
  dims.batch = input.dim_size(layout.batch());
  dims.in_depth = input.dim_size(layout.channels());
  dims.out_depth = filter.dim_size(3);
  if (filter.dim_size(2) != dims.in_depth) {
    if (filter.dim_size(2) > 0 && dims.in_depth % filter.dim_size(2) == 0) {
      return errors::Unimplemented("input ", input, " has depth ", dims.in_depth,
                                   ", a multiple of filter ", filter, "'s in_channels ",
                                   filter.dim_size(2), ": grouped convolution is not supported");
    }
    return errors::InvalidArgument("input ", input, " has depth ", dims.in_depth, " but filter ",
                                   filter, " has in_channels ", filter.dim_size(2));
  }
  WEIR_ASSIGN_OR_RETURN(dims.rows,
                        ComputeWindowDim("rows", input.dim_size(layout.rows()), filter.dim_size(0),
                                         attrs.strides[0], attrs.dilations[0], attrs.padding,
                                         attrs.explicit_paddings[0], attrs.explicit_paddings[1]));
  WEIR_ASSIGN_OR_RETURN(dims.cols,
                        ComputeWindowDim("cols", input.dim_size(layout.cols()), filter.dim_size(1),
                                         attrs.strides[1], attrs.dilations[1], attrs.padding,
                                         attrs.explicit_paddings[2], attrs.explicit_paddings[3]));
  WEIR_RETURN_IF_ERROR(CheckOutputShape(dims));
  return dims;
}

StatusOr<Window2DDims> ComputePool2DDims(const Window2DAttrs& attrs, const TensorShape& input) {
  if (input.rank() != 4) {
    return errors::InvalidArgument("input ", input, " must have rank 4 (", attrs.layout.name(),
                                   ")");
  }
  const ImageLayout& layout = attrs.layout;
  Window2DDims dims;
  dims.layout = layout;
  dims.batch = input.dim_size(layout.batch());
  dims.in_depth = dims.out_depth = input.dim_size(layout.channels());
  WEIR_ASSIGN_OR_RETURN(
      dims.rows,
      ComputeWindowDim("rows", input.dim_size(layout.rows()), attrs.window[0], attrs.strides[0], 1,
                       attrs.padding, attrs.explicit_paddings[0], attrs.explicit_paddings[1]));
  WEIR_ASSIGN_OR_RETURN(
      dims.cols,
      ComputeWindowDim("cols", input.dim_size(layout.cols()), attrs.window[1], attrs.strides[1], 1,
                       attrs.padding, attrs.explicit_paddings[2], attrs.explicit_paddings[3]));
  WEIR_RETURN_IF_ERROR(CheckOutputShape(dims));
  return dims;
}

StatusOr<TensorShape> ShapeFromSizes(const Tensor& sizes, int rank, const char* what) {
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntTensorValues(sizes, what));
  if (sizes.dims() != 1 || static_cast<int>(dims.size()) != rank) {
    return errors::InvalidArgument(what, " must be a vector of ", rank, " sizes but has shape ",
                                   sizes.shape(), " and values ", ListString(dims));
  }
  StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) return shape.status().WithContext(what);
  return shape;
}

StatusOr<TensorShape> BackpropInputShape(const Tensor& input_sizes, const ImageLayout& layout,
                                         const TensorShape& filter,
                                         const TensorShape& out_backprop) {
  const char* what = "input_sizes";
  if (input_sizes.NumElements() == 4) return ShapeFromSizes(input_sizes, 4, what);
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntTensorValues(input_sizes, what));
  if (input_sizes.dims() != 1 || dims.size() != 2) {
    return errors::InvalidArgument(what,
                                   " must be a vector of 4 sizes (or of 2: rows, cols) "
                                   "but has shape ",
                                   input_sizes.shape(), " and values ", ListString(dims));
  }
  if (filter.rank() != 4 || out_backprop.rank() != 4) {
    return errors::InvalidArgument("filter ", filter, " and out_backprop ", out_backprop,
                                   " must both have rank 4");
  }
  std::vector<int64_t> full(4);
  full[layout.batch()] = out_backprop.dim_size(layout.batch());
  full[layout.rows()] = dims[0];
  full[layout.cols()] = dims[1];
  full[layout.channels()] = filter.dim_size(2);
  StatusOr<TensorShape> shape = TensorShape::FromDims(full);
  if (!shape.ok()) return shape.status().WithContext(what);
  return shape;
}

}  // namespace weir
