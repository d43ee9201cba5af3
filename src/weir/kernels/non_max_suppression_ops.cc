// NonMaxSuppression V1..V5: greedy selection of boxes by descending score,
// dropping each box whose IoU with an already selected box exceeds
// iou_threshold; V3+ keep only scores above score_threshold, V4+ can pad the
// output to max_output_size, V5 adds Soft-NMS (overlapping scores decay by
// exp(-iou^2 / (2 sigma)) instead of being dropped) and returns the scores.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <string>
#include <vector>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// Boxes are [y1, x1, y2, x2] with the corners in either order.
float Iou(const float* a, const float* b) {
  const float a_ymin = std::min(a[0], a[2]), a_ymax = std::max(a[0], a[2]);
  const float a_xmin = std::min(a[1], a[3]), a_xmax = std::max(a[1], a[3]);
  const float b_ymin = std::min(b[0], b[2]), b_ymax = std::max(b[0], b[2]);
  const float b_xmin = std::min(b[1], b[3]), b_xmax = std::max(b[1], b[3]);
  const float area_a = (a_ymax - a_ymin) * (a_xmax - a_xmin);
  const float area_b = (b_ymax - b_ymin) * (b_xmax - b_xmin);
  if (!(area_a > 0) || !(area_b > 0)) return 0;
  const float height = std::max(std::min(a_ymax, b_ymax) - std::max(a_ymin, b_ymin), 0.0f);
  const float width = std::max(std::min(a_xmax, b_xmax) - std::max(a_xmin, b_xmin), 0.0f);
  const float intersection = height * width;
  return intersection / (area_a + area_b - intersection);
}

struct NmsParams {
  int64_t max_output_size = 0;
  float iou_threshold = 0.5f;
  float score_threshold = std::numeric_limits<float>::lowest();
  float soft_nms_sigma = 0;
};

// Indices and (decayed) scores of the selected boxes, in selection order.
void SelectBoxes(const std::vector<float>& boxes, const std::vector<float>& scores,
                 const NmsParams& params, std::vector<int32_t>* selected,
                 std::vector<float>* selected_scores) {
  struct Candidate {
    int32_t index;
    float score;
    size_t suppress_begin;  // selected boxes before this one were already applied
  };
  // Highest score first; equal scores by lower index.
  auto lower = [](const Candidate& a, const Candidate& b) {
    return a.score == b.score ? a.index > b.index : a.score < b.score;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lower)> queue(lower);
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] > params.score_threshold) queue.push({static_cast<int32_t>(i), scores[i], 0});
  }
  const bool soft = params.soft_nms_sigma > 0;
  const float scale = soft ? -0.5f / params.soft_nms_sigma : 0.0f;
  while (static_cast<int64_t>(selected->size()) < params.max_output_size && !queue.empty()) {
    Candidate next = queue.top();
    queue.pop();
    const float original = next.score;
    bool suppressed = false;
    // Overlapping boxes tend to have close scores: the latest selections
    // are the likeliest to suppress, so go backwards.
    for (size_t j = selected->size(); j-- > next.suppress_begin;) {
      const float iou = Iou(&boxes[4 * next.index], &boxes[4 * (*selected)[j]]);
      if (iou > params.iou_threshold) {
        suppressed = true;
        break;
      }
      if (soft) next.score *= std::exp(scale * iou * iou);
      if (next.score <= params.score_threshold) break;
    }
    next.suppress_begin = selected->size();
    if (suppressed) continue;
    if (next.score == original) {
      selected->push_back(next.index);
      selected_scores->push_back(next.score);
    } else if (next.score > params.score_threshold) {
      queue.push(next);  // decayed: it competes again with its new score
    }
  }
}

// version 1..5: the inputs after max_output_size are iou_threshold (V2+;
// V1 has it as an attr), score_threshold (V3+) and soft_nms_sigma (V5).
template <typename T, typename TThreshold, int kVersion>
class NonMaxSuppressionOp : public OpKernel {
 public:
  explicit NonMaxSuppressionOp(OpKernelConstruction* context) : OpKernel(context) {
    if (kVersion == 1) context->SetStatus(context->GetAttr("iou_threshold", &v1_iou_threshold_));
    if (kVersion >= 4) context->SetStatus(context->GetAttr("pad_to_max_output_size", &pad_));
  }

  void Compute(OpKernelContext* context) override {
    const std::string& op = type_string();
    const Tensor& boxes = context->input(0);
    const Tensor& scores = context->input(1);
    OP_REQUIRES(context, boxes.dims() == 2 && boxes.dim_size(1) == 4,
                errors::InvalidArgument(op, ": boxes must be [num_boxes, 4], got shape ",
                                        boxes.shape(), " of ", boxes.dtype()));
    const int64_t n = boxes.dim_size(0);
    OP_REQUIRES(context, scores.dims() == 1 && scores.dim_size(0) == n,
                errors::InvalidArgument(op, ": scores must be [num_boxes] = [", n, "], got shape ",
                                        scores.shape()));
    OP_REQUIRES(context, n <= std::numeric_limits<int32_t>::max(),
                errors::InvalidArgument(op, ": ", n, " boxes are more than int32 indexes"));
    NmsParams params;
    for (int i = 2; i < context->num_inputs(); ++i) {
      OP_REQUIRES(context, context->input(i).dims() == 0,
                  errors::InvalidArgument(op, ": input ", i, " must be a scalar, got shape ",
                                          context->input(i).shape()));
    }
    params.max_output_size = context->input(2).data<int32_t>()[0];
    OP_REQUIRES(context, params.max_output_size >= 0,
                errors::InvalidArgument(op, ": max_output_size must be non-negative, got ",
                                        params.max_output_size));
    params.iou_threshold = kVersion == 1 ? v1_iou_threshold_ : Threshold(context, 3);
    if (kVersion >= 3) params.score_threshold = Threshold(context, 4);
    if (kVersion == 5) params.soft_nms_sigma = Threshold(context, 5);
    OP_REQUIRES(context, params.iou_threshold >= 0 && params.iou_threshold <= 1,
                errors::InvalidArgument(op, ": iou_threshold must be in [0, 1], got ",
                                        params.iou_threshold));
    OP_REQUIRES(context, params.soft_nms_sigma >= 0,
                errors::InvalidArgument(op, ": soft_nms_sigma must be non-negative, got ",
                                        params.soft_nms_sigma));
    std::vector<float> box_values(4 * n), score_values(n);
    for (int64_t i = 0; i < 4 * n; ++i) box_values[i] = static_cast<float>(boxes.data<T>()[i]);
    for (int64_t i = 0; i < n; ++i) score_values[i] = static_cast<float>(scores.data<T>()[i]);
    std::vector<int32_t> selected;
    std::vector<float> selected_scores;
    SelectBoxes(box_values, score_values, params, &selected, &selected_scores);
    const int64_t valid = static_cast<int64_t>(selected.size());
    const int64_t size = pad_ ? params.max_output_size : valid;
    Tensor* indices;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({size}), &indices));
    std::fill_n(indices->data<int32_t>(), size, 0);
    std::copy(selected.begin(), selected.end(), indices->data<int32_t>());
    int next_output = 1;
    if (kVersion == 5) {
      Tensor* out_scores;
      OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({size}), &out_scores));
      T* s = out_scores->data<T>();
      for (int64_t i = 0; i < size; ++i) s[i] = static_cast<T>(i < valid ? selected_scores[i] : 0);
      next_output = 2;
    }
    if (kVersion >= 4) {
      Tensor* count;
      OP_REQUIRES_OK(context, context->allocate_output(next_output, TensorShape(), &count));
      count->data<int32_t>()[0] = static_cast<int32_t>(valid);
    }
  }

 private:
  static float Threshold(OpKernelContext* context, int input) {
    return static_cast<float>(context->input(input).data<TThreshold>()[0]);
  }

  float v1_iou_threshold_ = 0.5f;
  bool pad_ = false;
};

}  // namespace

void RegisterNonMaxSuppressionKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("NonMaxSuppression"),
                     MakeKernel<NonMaxSuppressionOp<float, float, 1>>);
  ForEachType<Eigen::half, float>([&]<typename T>() {
    ForEachType<Eigen::half, float>([&]<typename U>() {
      auto builder = [](const char* op) {
        return KernelBuilder(op).template TypeConstraint<T>("T").template TypeConstraint<U>(
            "T_threshold");
      };
      registry->Register(builder("NonMaxSuppressionV2"), MakeKernel<NonMaxSuppressionOp<T, U, 2>>);
      registry->Register(builder("NonMaxSuppressionV3"), MakeKernel<NonMaxSuppressionOp<T, U, 3>>);
      registry->Register(builder("NonMaxSuppressionV4"), MakeKernel<NonMaxSuppressionOp<T, U, 4>>);
    });
    registry->Register(KernelBuilder("NonMaxSuppressionV5").TypeConstraint<T>("T"),
                       MakeKernel<NonMaxSuppressionOp<T, T, 5>>);
  });
}

}  // namespace weir
