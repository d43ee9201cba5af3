// Saver: checkpoints of resource variables, as graph code plus a little
// bookkeeping on the client.
//
//   auto saver = Saver::Create(root, {{"w", w.handle, DT_FLOAT}, ...}, options);
//   ... session->Create(root.ToGraphDef()) ...
//   WEIR_ASSIGN_OR_RETURN(std::string path, saver->Save(session, dir, step));
//   WEIR_RETURN_IF_ERROR(saver->Restore(session, *Saver::LatestCheckpoint(dir)));
//
// Create adds a SaveV2 node and a RestoreV2 + AssignVariableOp subgraph for
// the given variables under the scope "save". A checkpoint is TensorFlow's
// layout (`<dir>/<basename>-<step>.index` and `.data-00000-of-00001`),
// written to temporary files and renamed, and the directory's `checkpoint`
// state file (TensorFlow's text format) is replaced atomically only after
// the checkpoint is complete: a crash at any moment leaves the previous
// checkpoint named and intact. Checkpoint names need not be variable names,
// so a Saver over some variables under other names restores part of a model
// from another model's checkpoint (transfer learning).
//
// With SaverOptions::sharded (TensorFlow's sharded save, as Python's
// Saver(sharded=True)): one SaveV2 per variable device, on CPU:0 of that
// device's task, into "<prefix>_temp/part-<i>-of-<n>", then
// MergeV2Checkpoints on the last device joins the parts into one checkpoint
// (`.data-<i>-of-<n>`, one index); restore runs one RestoreV2 per device.
// So on a cluster each task writes and reads its own variables, and the
// checkpoint directory must be a file system every task sees.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weir/graph/scope.h"
#include "weir/runtime/session.h"

namespace weir {

// A resource variable and the name its value has in checkpoints.
struct SaveableVariable {
  std::string name;  // key in the checkpoint
  Output handle;     // DT_RESOURCE output of a VarHandleOp
  DType dtype;       // the variable's dtype
};

struct SaverOptions {
  std::string basename = "model.ckpt";
  // Keep this many newest checkpoints; older ones are deleted. 0: keep all.
  int max_to_keep = 5;
  // Also keep the checkpoint with the best metric passed to Save, even when
  // it is older than the newest max_to_keep.
  bool keep_best = false;
  bool higher_metric_is_better = true;
  // One save and one restore per variable device (see above).
  bool sharded = false;
};

class Saver {
 public:
  // InvalidArgument for no variables, duplicate names, a handle that is
  // not DT_RESOURCE, or (sharded) a handle whose device does not parse.
  static StatusOr<std::unique_ptr<Saver>> Create(const Scope& scope,
                                                 std::vector<SaveableVariable> variables,
                                                 SaverOptions options = {});

  // Writes `<dir>/<basename>-<step>`, records it (with `metric`, if given) in
  // `<dir>/checkpoint`, deletes checkpoints the options no longer keep, and
  // returns the new checkpoint's prefix. Creates `dir` if needed.
  StatusOr<std::string> Save(Session* session, const std::string& dir, int64_t step,
                             std::optional<double> metric = std::nullopt);

  // Assigns every variable its value in the checkpoint `prefix`. NotFound
  // naming the tensor when the checkpoint lacks one; DataLoss naming the
  // file when it is corrupt or truncated (no variable is changed then:
  // every value is read and checked before any is assigned).
  Status Restore(Session* session, const std::string& prefix) const;

  // The newest checkpoint recorded in `<dir>/checkpoint`; NotFound when there
  // is none.
  static StatusOr<std::string> LatestCheckpoint(const std::string& dir);

  // All checkpoints recorded in `<dir>/checkpoint`, oldest first.
  static StatusOr<std::vector<std::string>> ListCheckpoints(const std::string& dir);

  // The step a prefix was saved at ("<...>-<step>"), or -1.
  static int64_t StepOf(const std::string& prefix);

  const std::vector<SaveableVariable>& variables() const { return variables_; }

 private:
  struct Record {
    std::string prefix;  // relative to the directory
    std::optional<double> metric;
  };

  Saver(std::vector<SaveableVariable> variables, SaverOptions options)
      : variables_(std::move(variables)), options_(std::move(options)) {}

  // Which of `records` (oldest first) the options keep.
  std::vector<bool> Kept(const std::vector<Record>& records) const;

  std::vector<SaveableVariable> variables_;
  std::vector<PartialShape> declared_shapes_;  // per variable, from its VarHandleOp
  SaverOptions options_;
  std::string filename_feed_;    // scalar string placeholder: the prefix
  std::string save_target_;      // SaveV2, or MergeV2Checkpoints when sharded
  std::vector<std::string> restore_outputs_;  // per variable: its RestoreV2 output
  std::string restore_target_;   // NoOp after every assignment
};

// When to save during training: every `every_steps` steps and/or every
// `every_seconds` of wall time, whichever comes first (0 disables either).
class CheckpointSchedule {
 public:
  CheckpointSchedule(int64_t every_steps, double every_seconds);

  // True when a save is due at `step`; the caller saves, then calls Saved.
  bool Due(int64_t step) const;
  void Saved(int64_t step);

 private:
  int64_t every_steps_;
  double every_seconds_;
  int64_t last_step_ = 0;
  std::chrono::steady_clock::time_point last_time_;
};

}  // namespace weir
