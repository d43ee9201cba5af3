#include "weir/framework/window3d_shape.h"

#include <string>

#include "weir/base/checked_math.h"

namespace weir {
namespace {

StatusOr<Padding> GetPadding(const AttrMap& attrs) {
  std::string padding;
  WEIR_RETURN_IF_ERROR(GetAttr(attrs, "padding", &padding));
  if (padding == "SAME") return Padding::kSame;
  if (padding == "VALID") return Padding::kValid;
  return errors::InvalidArgument("padding '", padding, "' must be SAME or VALID");
}

// The spatial entries of a 5-value NDHWC / NCDHW attr; the batch and
// channel entries must be 1 (TensorFlow supports no others).
StatusOr<std::array<int64_t, 3>> Spatial3D(const AttrMap& attrs, const char* name,
                                           bool channels_first) {
  std::vector<int64_t> values;
  WEIR_RETURN_IF_ERROR(GetAttr(attrs, name, &values));
  if (values.size() != 5) {
    return errors::InvalidArgument(name, " must have 5 values, got ", values.size());
  }
  const int first = channels_first ? 2 : 1;
  if (values[0] != 1 || values[channels_first ? 1 : 4] != 1) {
    return errors::InvalidArgument(name, " in the batch and channels dimensions must be 1");
  }
  std::array<int64_t, 3> out{values[first], values[first + 1], values[first + 2]};
  for (int64_t v : out) {
    if (v <= 0) return errors::InvalidArgument(name, " must be positive, got ", v);
  }
  return out;
}

StatusOr<Window3DAttrs> Common(const AttrMap& attrs) {
  Window3DAttrs out;
  std::string format = "NDHWC";
  if (attrs.count("data_format")) WEIR_RETURN_IF_ERROR(GetAttr(attrs, "data_format", &format));
  if (format != "NDHWC" && format != "NCDHW") {
    return errors::InvalidArgument("data_format '", format, "' must be NDHWC or NCDHW");
  }
  out.channels_first = format == "NCDHW";
  WEIR_ASSIGN_OR_RETURN(out.padding, GetPadding(attrs));
  WEIR_ASSIGN_OR_RETURN(out.strides, Spatial3D(attrs, "strides", out.channels_first));
  return out;
}

const char* const kSpatialNames[3] = {"planes", "rows", "cols"};

int SpatialAxis(bool channels_first, int i) { return channels_first ? 2 + i : 1 + i; }

Status FillSpatial(const Window3DAttrs& attrs, const TensorShape& input, Window3DDims* dims) {
  for (int i = 0; i < 3; ++i) {
    WEIR_ASSIGN_OR_RETURN(
        dims->spatial[i],
        ComputeWindowDim(kSpatialNames[i], input.dim_size(SpatialAxis(attrs.channels_first, i)),
                         attrs.window[i], attrs.strides[i], attrs.dilations[i], attrs.padding));
  }
  std::vector<int64_t> out = dims->OutputDims(attrs.channels_first);
  return CheckedElementCount(out, "output").status();
}

}  // namespace

std::vector<int64_t> Window3DDims::OutputDims(bool channels_first) const {
  if (channels_first) {
    return {batch, out_channels, spatial[0].output, spatial[1].output, spatial[2].output};
  }
  return {batch, spatial[0].output, spatial[1].output, spatial[2].output, out_channels};
}

StatusOr<Window3DAttrs> GetConv3DAttrs(const AttrMap& attrs) {
  WEIR_ASSIGN_OR_RETURN(Window3DAttrs out, Common(attrs));
  if (attrs.count("dilations")) {
    WEIR_ASSIGN_OR_RETURN(out.dilations, Spatial3D(attrs, "dilations", out.channels_first));
  }
  return out;
}

StatusOr<Window3DAttrs> GetPool3DAttrs(const AttrMap& attrs) {
  WEIR_ASSIGN_OR_RETURN(Window3DAttrs out, Common(attrs));
  WEIR_ASSIGN_OR_RETURN(out.window, Spatial3D(attrs, "ksize", out.channels_first));
  return out;
}

StatusOr<Window3DDims> ComputeConv3DDims(const Window3DAttrs& attrs, const TensorShape& input,
                                         const TensorShape& filter) {
  if (input.rank() != 5 || filter.rank() != 5) {
    return errors::InvalidArgument("input ", input, " and filter ", filter,
                                   " must both have rank 5 (input ",
                                   attrs.channels_first ? "NCDHW" : "NDHWC",
                                   ", filter [planes, rows, cols, in_channels, out_channels])");
  }
  Window3DDims dims;
  dims.batch = input.dim_size(0);
  dims.in_channels = input.dim_size(attrs.channels_first ? 1 : 4);
  dims.out_channels = filter.dim_size(4);
  if (filter.dim_size(3) != dims.in_channels) {
    return errors::InvalidArgument("input ", input, " has ", dims.in_channels,
                                   " channels but filter ", filter, " has in_channels ",
                                   filter.dim_size(3));
  }
  Window3DAttrs with_window = attrs;
  for (int i = 0; i < 3; ++i) with_window.window[i] = filter.dim_size(i);
  for (int64_t w : with_window.window) {
    if (w <= 0) return errors::InvalidArgument("filter ", filter, " has an empty window");
  }
  WEIR_RETURN_IF_ERROR(FillSpatial(with_window, input, &dims));
  return dims;
}

StatusOr<Window3DDims> ComputePool3DDims(const Window3DAttrs& attrs, const TensorShape& input) {
  if (input.rank() != 5) {
    return errors::InvalidArgument("input ", input, " must have rank 5 (",
                                   attrs.channels_first ? "NCDHW" : "NDHWC", ")");
  }
  Window3DDims dims;
  dims.batch = input.dim_size(0);
  dims.in_channels = dims.out_channels = input.dim_size(attrs.channels_first ? 1 : 4);
  WEIR_RETURN_IF_ERROR(FillSpatial(attrs, input, &dims));
  return dims;
}

StatusOr<Window3DDims> ComputePatchDims(const AttrMap& attrs, const TensorShape& input) {
  if (input.rank() != 4) {
    return errors::InvalidArgument("images ", input, " must have rank 4 (NHWC)");
  }
  std::array<std::array<int64_t, 2>, 3> values;  // ksizes, strides, rates
  const char* names[3] = {"ksizes", "strides", "rates"};
  for (int k = 0; k < 3; ++k) {
    std::vector<int64_t> v;
    WEIR_RETURN_IF_ERROR(GetAttr(attrs, names[k], &v));
    if (v.size() != 4 || v[0] != 1 || v[3] != 1) {
      return errors::InvalidArgument(names[k], " must be [1, rows, cols, 1]");
    }
    if (v[1] <= 0 || v[2] <= 0) {
      return errors::InvalidArgument(names[k], " must be positive, got [", v[1], ", ", v[2], "]");
    }
    values[k] = {v[1], v[2]};
  }
  WEIR_ASSIGN_OR_RETURN(Padding padding, GetPadding(attrs));
  Window3DDims dims;
  dims.batch = input.dim_size(0);
  dims.in_channels = input.dim_size(3);
  for (int i = 0; i < 2; ++i) {
    WEIR_ASSIGN_OR_RETURN(dims.spatial[i + 1],
                          ComputeWindowDim(kSpatialNames[i + 1], input.dim_size(1 + i),
                                           values[0][i], values[1][i], values[2][i], padding));
  }
  int64_t depth;
  WEIR_RETURN_IF_ERROR(CheckedMultiply(values[0][0], values[0][1], &depth, "patch size"));
  WEIR_RETURN_IF_ERROR(CheckedMultiply(depth, dims.in_channels, &dims.out_channels, "patch depth"));
  dims.spatial[0].output = 1;
  std::vector<int64_t> out = {dims.batch, dims.spatial[1].output, dims.spatial[2].output,
                              dims.out_channels};
  WEIR_RETURN_IF_ERROR(CheckedElementCount(out, "patches").status());
  return dims;
}

}  // namespace weir
