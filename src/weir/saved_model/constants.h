// Names fixed by TensorFlow's SavedModel format: files of the directory,
// standard tags, signature keys and collection keys.
#pragma once

namespace weir::saved_model {

// Files and folders of a SavedModel directory.
inline constexpr char kSavedModelFilenamePb[] = "saved_model.pb";
inline constexpr char kSavedModelFilenamePbTxt[] = "saved_model.pbtxt";
inline constexpr char kVariablesDirectory[] = "variables";
inline constexpr char kVariablesFilename[] = "variables";  // checkpoint prefix under variables/
inline constexpr char kAssetsDirectory[] = "assets";

// Tags of the standard MetaGraphDefs.
inline constexpr char kTagServe[] = "serve";
inline constexpr char kTagTrain[] = "train";
inline constexpr char kTagGpu[] = "gpu";
inline constexpr char kTagTpu[] = "tpu";

// Signature keys.
inline constexpr char kDefaultServingSignatureDefKey[] = "serving_default";
// TF2 exports name the op to run after restoring as the only output of this
// signature, under the same key.
inline constexpr char kInitOpSignatureKey[] = "__saved_model_init_op";

// Collections that TF1 exports use for the op to run after restoring: the
// main op, or (older) the legacy init op.
inline constexpr char kMainOpCollectionKey[] = "saved_model_main_op";
inline constexpr char kLegacyInitOpCollectionKey[] = "legacy_init_op";
// TF1 exports list their assets (AssetFileDef messages) in this collection.
inline constexpr char kAssetsCollectionKey[] = "saved_model_assets";

}  // namespace weir::saved_model
