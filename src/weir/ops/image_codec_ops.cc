// Image codecs (DecodeJpeg, DecodePng, DecodeImage, DecodeAndCropJpeg,
// EncodeJpeg, EncodePng, ExtractJpegShape), the colour ops (RGBToHSV,
// HSVToRGB, AdjustContrastv2, AdjustHue, AdjustSaturation) and non-max
// suppression (NonMaxSuppression, V2..V5), with TensorFlow's OpDefs. Images
// are [height, width, channels] (the colour ops take any rank whose last
// dimension is the channels).
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;

Status ScalarContents(InferenceContext* c) {
  PartialShape contents;
  return c->WithRank(0, 0, &contents);
}

// [?, ?, channels] (channels unknown when the attr is 0: the file's).
Status DecodedImageShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(ScalarContents(c));
  int64_t channels = 0;
  WEIR_RETURN_IF_ERROR(c->GetAttr("channels", &channels));
  if (channels < 0) {
    return errors::InvalidArgument("channels must be non-negative, got ", channels);
  }
  c->set_output(0, PartialShape({kUnknown, kUnknown, channels == 0 ? kUnknown : channels}));
  return Status::OK();
}

Status EncodeShape(InferenceContext* c) {
  PartialShape image;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 3, &image));
  c->set_output(0, PartialShape({}));
  return Status::OK();
}

// Colour ops: images of rank >= 1 with 3 channels last (`channels3`), the
// other inputs scalars; the output has the images' shape.
Status ColorShape(InferenceContext* c, int min_rank, bool channels3) {
  PartialShape images;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, min_rank, &images));
  if (channels3 && images.known_rank() && images.dim(images.rank() - 1) >= 0 &&
      images.dim(images.rank() - 1) != 3) {
    return errors::InvalidArgument("images ", images, " must have 3 channels (last dimension)");
  }
  for (int i = 1; i < c->num_inputs(); ++i) {
    PartialShape scalar;
    WEIR_RETURN_IF_ERROR(c->WithRank(i, 0, &scalar));
  }
  c->set_output(0, images);
  return Status::OK();
}

// boxes [n, 4], scores [n], max_output_size and the thresholds scalars;
// selected_indices [?] or [max_output_size] when padded.
Status NmsShape(InferenceContext* c) {
  PartialShape boxes, scores;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 2, &boxes));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &scores));
  if (boxes.dim(1) >= 0 && boxes.dim(1) != 4) {
    return errors::InvalidArgument("boxes ", boxes, " must have shape [num_boxes, 4]");
  }
  int64_t n;
  if (!InferenceContext::MergeDim(boxes.dim(0), scores.dim(0), &n).ok()) {
    return errors::InvalidArgument("boxes ", boxes, " and scores ", scores,
                                   " must have one entry per box");
  }
  for (int i = 2; i < c->num_inputs(); ++i) {
    PartialShape scalar;
    WEIR_RETURN_IF_ERROR(c->WithRank(i, 0, &scalar));
  }
  bool pad = false;
  if (c->attrs().count("pad_to_max_output_size")) {
    WEIR_RETURN_IF_ERROR(c->GetAttr("pad_to_max_output_size", &pad));
  }
  int64_t size = kUnknown;
  if (pad) {
    if (const Tensor* t = c->input_tensor(2)) {
      WEIR_ASSIGN_OR_RETURN(auto values, IntTensorValues(*t, "max_output_size"));
      if (values.size() == 1 && values[0] >= 0) size = values[0];
    }
  }
  for (int i = 0; i < c->num_outputs(); ++i) {
    const bool scalar = i == c->num_outputs() - 1 && c->num_outputs() > 1;
    c->set_output(i, scalar ? PartialShape({}) : PartialShape({size}));
  }
  return Status::OK();
}

OpDefBuilder AddJpegAttrs(OpDefBuilder builder) {
  builder.Attr("channels: int = 0")
      .Attr("ratio: int = 1")
      .Attr("fancy_upscaling: bool = true")
      .Attr("try_recover_truncated: bool = false")
      .Attr("acceptable_fraction: float = 1")
      .Attr("dct_method: string = ''");
  return builder;
}

void RegisterCodecOps(OpRegistry* registry) {
  registry->Register(
      AddJpegAttrs(OpDefBuilder("DecodeJpeg").Input("contents: string").Output("image: uint8"))
          .SetShapeFn(DecodedImageShape)
          .Doc("Decodes a JPEG (or PNG) image to uint8 [height, width, "
               "channels]; channels 0 keeps the file's, 1 is grayscale, 3 RGB; "
               "ratio (1, 2, 4, 8) downscales while decoding."));
  registry->Register(
      AddJpegAttrs(OpDefBuilder("DecodeAndCropJpeg")
                       .Input("contents: string")
                       .Input("crop_window: int32")
                       .Output("image: uint8"))
          .SetShapeFn([](InferenceContext* c) {
            WEIR_RETURN_IF_ERROR(DecodedImageShape(c));
            PartialShape window;
            WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &window));
            return Status::OK();
          })
          .Doc("DecodeJpeg, then the window crop_window = [y, x, height, width] of the image."));
  registry->Register(OpDefBuilder("DecodePng")
                         .Input("contents: string")
                         .Output("image: dtype")
                         .Attr("channels: int = 0")
                         .Attr("dtype: {uint8, uint16} = uint8")
                         .SetShapeFn(DecodedImageShape)
                         .Doc("Decodes a PNG (or JPEG) image to [height, width, channels] "
                              "uint8 or uint16; channels 0 keeps the file's, 1 gray, 2 gray and "
                              "alpha, 3 RGB, 4 RGBA."));
  registry->Register(
      OpDefBuilder("DecodeImage")
          .Input("contents: string")
          .Output("image: dtype")
          .Attr("channels: int = 0")
          .Attr("dtype: {uint8, uint16, float} = uint8")
          .Attr("expand_animations: bool = true")
          .SetShapeFn([](InferenceContext* c) {
            WEIR_RETURN_IF_ERROR(DecodedImageShape(c));
            bool expand = true;
            WEIR_RETURN_IF_ERROR(c->GetAttr("expand_animations", &expand));
            // An animated GIF would be [frames, h, w, c].
            if (expand) c->set_output(0, PartialShape::UnknownRank());
            return Status::OK();
          })
          .Doc("Decodes a JPEG or PNG image (the format sniffed from its first bytes) to "
               "[height, width, channels] of dtype (float scales to [0, 1])."));
  registry->Register(OpDefBuilder("DecodeBmp")
                         .Input("contents: string")
                         .Output("image: uint8")
                         .Attr("channels: int = 0")
                         .SetShapeFn(DecodedImageShape)
                         .Doc("Decodes an uncompressed 24- or 32-bit BMP (or a JPEG or PNG) to "
                              "uint8 [height, width, channels]."));
  registry->Register(OpDefBuilder("EncodeJpeg")
                         .Input("image: uint8")
                         .Output("contents: string")
                         .Attr("format: {'', 'grayscale', 'rgb'} = ''")
                         .Attr("quality: int = 95")
                         .Attr("progressive: bool = false")
                         .Attr("optimize_size: bool = false")
                         .Attr("chroma_downsampling: bool = true")
                         .Attr("density_unit: {'in', 'cm'} = 'in'")
                         .Attr("x_density: int = 300")
                         .Attr("y_density: int = 300")
                         .Attr("xmp_metadata: string = ''")
                         .SetShapeFn(EncodeShape)
                         .Doc("Encodes a uint8 [height, width, 1 or 3] image as a JPEG string."));
  registry->Register(OpDefBuilder("EncodePng")
                         .Input("image: T")
                         .Output("contents: string")
                         .Attr("compression: int = -1")
                         .Attr("T: {uint8, uint16} = uint8")
                         .SetShapeFn(EncodeShape)
                         .Doc("Encodes a [height, width, 1..4] image as a PNG string; "
                              "compression -1 is zlib's default, 0..9 its levels."));
  registry->Register(OpDefBuilder("ExtractJpegShape")
                         .Input("contents: string")
                         .Output("image_shape: output_type")
                         .Attr("output_type: {int32, int64} = int32")
                         .SetShapeFn([](InferenceContext* c) {
                           WEIR_RETURN_IF_ERROR(ScalarContents(c));
                           c->set_output(0, PartialShape({3}));
                           return Status::OK();
                         })
                         .Doc("[height, width, channels] of a JPEG, from its header only."));
}

void RegisterColorOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("RGBToHSV")
                         .Input("images: T")
                         .Output("output: T")
                         .Attr("T: {half, bfloat16, float, double} = float")
                         .SetShapeFn([](InferenceContext* c) { return ColorShape(c, 1, true); })
                         .Doc("RGB in [0, 1] to hue, saturation, value in [0, 1], along the "
                              "last dimension."));
  registry->Register(OpDefBuilder("HSVToRGB")
                         .Input("images: T")
                         .Output("output: T")
                         .Attr("T: {half, bfloat16, float, double} = float")
                         .SetShapeFn([](InferenceContext* c) { return ColorShape(c, 1, true); })
                         .Doc("RGBToHSV's inverse."));
  registry->Register(OpDefBuilder("AdjustContrastv2")
                         .Input("images: T")
                         .Input("contrast_factor: float")
                         .Output("output: T")
                         .Attr("T: {half, float} = float")
                         .SetShapeFn([](InferenceContext* c) { return ColorShape(c, 3, false); })
                         .Doc("(x - mean) * contrast_factor + mean, the mean of each channel "
                              "over each image's height and width."));
  registry->Register(OpDefBuilder("AdjustHue")
                         .Input("images: T")
                         .Input("delta: float")
                         .Output("output: T")
                         .Attr("T: {half, float} = float")
                         .SetShapeFn([](InferenceContext* c) { return ColorShape(c, 3, true); })
                         .Doc("Adds delta to the hue of RGB images (hue wraps around [0, 1))."));
  registry->Register(OpDefBuilder("AdjustSaturation")
                         .Input("images: T")
                         .Input("scale: float")
                         .Output("output: T")
                         .Attr("T: {half, float} = float")
                         .SetShapeFn([](InferenceContext* c) { return ColorShape(c, 3, true); })
                         .Doc("Multiplies the saturation of RGB images by scale (clamped to "
                              "[0, 1])."));
}

void RegisterNmsOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("NonMaxSuppression")
                         .Input("boxes: float")
                         .Input("scores: float")
                         .Input("max_output_size: int32")
                         .Output("selected_indices: int32")
                         .Attr("iou_threshold: float = 0.5")
                         .SetShapeFn(NmsShape)
                         .Doc("Greedy non-max suppression: indices of at most max_output_size "
                              "boxes by descending score, each overlapping every earlier one "
                              "by IoU <= iou_threshold."));
  registry->Register(OpDefBuilder("NonMaxSuppressionV2")
                         .Input("boxes: T")
                         .Input("scores: T")
                         .Input("max_output_size: int32")
                         .Input("iou_threshold: T_threshold")
                         .Output("selected_indices: int32")
                         .Attr("T: {half, float} = float")
                         .Attr("T_threshold: {half, float} = float")
                         .SetShapeFn(NmsShape)
                         .Doc("NonMaxSuppression with iou_threshold an input."));
  registry->Register(OpDefBuilder("NonMaxSuppressionV3")
                         .Input("boxes: T")
                         .Input("scores: T")
                         .Input("max_output_size: int32")
                         .Input("iou_threshold: T_threshold")
                         .Input("score_threshold: T_threshold")
                         .Output("selected_indices: int32")
                         .Attr("T: {half, float} = float")
                         .Attr("T_threshold: {half, float} = float")
                         .SetShapeFn(NmsShape)
                         .Doc("NonMaxSuppressionV2 keeping only boxes scoring above "
                              "score_threshold."));
  registry->Register(OpDefBuilder("NonMaxSuppressionV4")
                         .Input("boxes: T")
                         .Input("scores: T")
                         .Input("max_output_size: int32")
                         .Input("iou_threshold: T_threshold")
                         .Input("score_threshold: T_threshold")
                         .Output("selected_indices: int32")
                         .Output("valid_outputs: int32")
                         .Attr("T: {half, float} = float")
                         .Attr("T_threshold: {half, float} = float")
                         .Attr("pad_to_max_output_size: bool = false")
                         .SetShapeFn(NmsShape)
                         .Doc("NonMaxSuppressionV3 that can pad selected_indices with zeros to "
                              "max_output_size; valid_outputs counts the real ones."));
  registry->Register(OpDefBuilder("NonMaxSuppressionV5")
                         .Input("boxes: T")
                         .Input("scores: T")
                         .Input("max_output_size: int32")
                         .Input("iou_threshold: T")
                         .Input("score_threshold: T")
                         .Input("soft_nms_sigma: T")
                         .Output("selected_indices: int32")
                         .Output("selected_scores: T")
                         .Output("valid_outputs: int32")
                         .Attr("T: {half, float} = float")
                         .Attr("pad_to_max_output_size: bool = false")
                         .SetShapeFn(NmsShape)
                         .Doc("NonMaxSuppressionV4 with Soft-NMS (soft_nms_sigma > 0 decays "
                              "overlapping scores by exp(-iou^2 / (2 sigma))) and the selected "
                              "boxes' (decayed) scores."));
}

}  // namespace

void RegisterImageCodecOps(OpRegistry* registry) {
  RegisterCodecOps(registry);
  RegisterColorOps(registry);
  RegisterNmsOps(registry);
}

}  // namespace weir
