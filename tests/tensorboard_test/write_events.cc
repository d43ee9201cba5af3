// Writes the event file check_tensorboard.py reads with TensorBoard's own
// reader: the graph, then for steps 1..5 with x = 0.5 * step the merged
// output of summary ops run in a Session (ScalarSummary "loss" = x^2,
// ScalarSummary ["accuracy/top1", "accuracy/top5"] = [0.5x, 0.25x],
// HistogramSummary "weights" of x * [-1, 0, 1, 2, 3]) and the client-side
// scalar "examples_per_second" = 100 * step. Prints the event file's path.
//
//   tensorboard_write_events LOGDIR
#include <cstdio>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/event_writer.h"

namespace weir {
namespace {

Status WriteEvents(const std::string& logdir) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Scope summaries = root.NewSubScope("summaries");
  auto loss = ops::Square(root.WithOpName("loss"), x);
  auto accuracy = ops::Mul(root.WithOpName("accuracy"), ops::Const(root, {0.5f, 0.25f}), x);
  auto weights =
      ops::Mul(root.WithOpName("weights"), ops::Const(root, {-1.f, 0.f, 1.f, 2.f, 3.f}), x);
  auto loss_summary = ops::ScalarSummary(
      summaries.WithOpName("loss"), ops::Const(root, Tensor::Scalar<std::string>("loss")), loss);
  auto accuracy_summary = ops::ScalarSummary(
      summaries.WithOpName("accuracy"),
      ops::Const(root, Tensor::FromVector<std::string>({"accuracy/top1", "accuracy/top5"})),
      accuracy);
  auto weights_summary =
      ops::HistogramSummary(summaries.WithOpName("weights"),
                            ops::Const(root, Tensor::Scalar<std::string>("weights")), weights);
  ops::MergeSummary(summaries.WithOpName("merged"),
                    {loss_summary, accuracy_summary, weights_summary});
  WEIR_RETURN_IF_ERROR(root.status());

  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(SessionOptions()));
  WEIR_RETURN_IF_ERROR(session->Create(root.ToGraphDef()));
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<EventFileWriter> writer, EventFileWriter::Create(logdir));
  WEIR_RETURN_IF_ERROR(writer->AddGraph(*root.graph()));
  for (int64_t step = 1; step <= 5; ++step) {
    std::vector<Tensor> outputs;
    WEIR_RETURN_IF_ERROR(session->Run({{"x", Tensor::Scalar<float>(0.5f * step)}},
                                      {"summaries/merged"}, {}, &outputs));
    WEIR_RETURN_IF_ERROR(writer->AddSummary(outputs[0].scalar<std::string>(), step));
    WEIR_RETURN_IF_ERROR(writer->AddScalar("examples_per_second", 100.0 * step, step));
  }
  WEIR_RETURN_IF_ERROR(writer->Close());
  std::printf("%s\n", writer->path().c_str());
  return Status::OK();
}

}  // namespace
}  // namespace weir

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LOGDIR\n", argv[0]);
    return 2;
  }
  weir::Status status = weir::WriteEvents(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
