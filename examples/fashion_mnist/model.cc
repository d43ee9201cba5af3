#include "model.h"

#include <cmath>
#include <random>

#include "weir/base/str_util.h"
#include "weir/ops/const_op.h"
#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace fashion_mnist {
namespace {

constexpr int kNumClasses = 10;
constexpr int kRows = 28, kColumns = 28;  // an image, as the LSTM reads it
constexpr int kLstmUnits = 128;

// Builds layers, numbering the random ops' seed2 so that every initializer
// and dropout mask draws its own reproducible stream from the graph seed.
class LayerBuilder {
 public:
  LayerBuilder(const Scope& scope, int64_t seed, Model* model)
      : scope_(scope), seed_(seed), model_(model) {}

  // Uniform in [-limit, limit) with limit = sqrt(6 / (fan_in + fan_out)).
  Output GlorotUniform(const Scope& s, const std::vector<int64_t>& shape, int64_t fan_in,
                       int64_t fan_out) {
    const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
    Output u = ops::RandomUniform(s, ops::Const(s, Tensor::FromVector<int64_t>(shape)), DT_FLOAT,
                                  RandomSeeds());
    return ops::Sub(s, ops::Mul(s, u, 2 * limit), limit);
  }

  // A [rows, columns] matrix (rows <= columns) with orthonormal rows, as
  // Keras initializes an LSTM's recurrent kernel: Gram-Schmidt on Gaussian
  // rows drawn from (seed, stream) on the host (Box-Muller on mt19937_64,
  // whose output is the same everywhere), a constant of the graph.
  Output Orthogonal(const Scope& s, int64_t rows, int64_t columns) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed_) * 1000003u + static_cast<uint64_t>(++stream_));
    auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0; };
    std::vector<double> m(rows * columns);
    for (double& v : m) v = std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());
    for (int64_t r = 0; r < rows; ++r) {
      double* row = &m[r * columns];
      for (int64_t q = 0; q < r; ++q) {
        const double* prev = &m[q * columns];
        double dot = 0;
        for (int64_t c = 0; c < columns; ++c) dot += row[c] * prev[c];
        for (int64_t c = 0; c < columns; ++c) row[c] -= dot * prev[c];
      }
      double norm = 0;
      for (int64_t c = 0; c < columns; ++c) norm += row[c] * row[c];
      for (int64_t c = 0; c < columns; ++c) row[c] /= std::sqrt(norm);
    }
    return ops::Const(s, Tensor::FromVector<float>(std::vector<float>(m.begin(), m.end()),
                                                   TensorShape({rows, columns})));
  }

  Output NewVariable(const Scope& s, const std::string& name, const Output& initial) {
    StatusOr<Variable> v = Variable::Create(s, name, initial);
    if (!v.ok()) {
      s.UpdateStatus(v.status());
      return Output();
    }
    model_->variables.push_back(*v);
    return v->value;
  }

  static Output Zeros(const Scope& s, int64_t n) {
    return ops::Fill(s, ops::Const(s, Tensor::FromVector<int64_t>({n})), 0.0f);
  }

  Output Dense(const std::string& name, const Output& x, int64_t in, int64_t out, bool relu) {
    Scope s = scope_.NewSubScope(name);
    Output w = NewVariable(s, "kernel", GlorotUniform(s, {in, out}, in, out));
    Output b = NewVariable(s, "bias", Zeros(s, out));
    Output y = ops::BiasAdd(s, ops::MatMul(s, x, w), b);
    return relu ? ops::Relu(s, y) : y;
  }

  // 5x5 SAME convolution with bias and relu, then 2x2 max-pooling.
  Output ConvPool(const std::string& name, const Output& x, int64_t in, int64_t out) {
    Scope s = scope_.NewSubScope(name);
    const int64_t k = 5;
    Output w = NewVariable(s, "kernel", GlorotUniform(s, {k, k, in, out}, k * k * in, k * k * out));
    Output b = NewVariable(s, "bias", Zeros(s, out));
    Output y = ops::Relu(s, ops::BiasAdd(s, ops::Conv2D(s, x, w, {1, 1, 1, 1}, "SAME"), b));
    return ops::MaxPool(s, y, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  }

  // The LSTM layer over `images` [batch, 784] read row by row; returns the
  // last h [batch, units]. With towers > 1 the batch is cut into that many
  // slices of (nearly) equal rows, each read by its own loop (its own frame,
  // so the executor runs the loops side by side) with the same w and b, and
  // the slices' h are joined again in batch order: the same values as one
  // loop over the whole batch, and, since the loss is the mean over the
  // joined batch, the same gradients (each loop's share of w's gradient,
  // summed).
  StatusOr<Output> Lstm(const Output& images, bool unrolled, int towers) {
    Scope s = scope_.NewSubScope("lstm");
    const int64_t gates = 4 * kLstmUnits;
    // Keras's initialization: Glorot-uniform input weights over [x, h]'s x
    // rows, orthogonal recurrent weights; w is both, stacked.
    const Output w =
        NewVariable(s, "kernel",
                    ops::ConcatV2(s,
                                  {GlorotUniform(s, {kColumns, gates}, kColumns, gates),
                                   Orthogonal(s, kLstmUnits, gates)},
                                  0));
    const Output b = NewVariable(s, "bias", Zeros(s, gates));
    const Output no_peepholes = Zeros(s, kLstmUnits);  // read only with use_peephole
    if (towers == 1) return LstmTower(s, images, w, b, no_peepholes, unrolled);
    // Tower i reads rows [batch * i / towers, batch * (i + 1) / towers): a
    // first-dim Slice, which shares the images' buffer. In int64, so that
    // batch * towers cannot overflow.
    const Output batch = ops::Slice(s, ops::Shape(s, images, {{"out_type", DT_INT64}}),
                                    ops::Const(s, Tensor::FromVector<int64_t>({0})),
                                    ops::Const(s, Tensor::FromVector<int64_t>({1})));
    auto int64_vector = [](const Scope& t, int64_t v) {
      return ops::Const(t, Tensor::FromVector<int64_t>({v}));
    };
    auto boundary = [&](const Scope& t, int i) {
      return ops::FloorDiv(t, ops::Mul(t, batch, ops::Const(t, Tensor::Scalar<int64_t>(i))),
                           ops::Const(t, Tensor::Scalar<int64_t>(towers)));
    };
    std::vector<Input> last_h;
    for (int i = 0; i < towers; ++i) {
      Scope t = s.NewSubScope(StrCat("tower", i));
      const Output begin = boundary(t, i);
      const Output size = ops::Sub(t, boundary(t, i + 1), begin);
      const Output slice = ops::Slice(t, images, ops::ConcatV2(t, {begin, int64_vector(t, 0)}, 0),
                                      ops::ConcatV2(t, {size, int64_vector(t, -1)}, 0));
      WEIR_ASSIGN_OR_RETURN(Output h, LstmTower(t, slice, w, b, no_peepholes, unrolled));
      last_h.push_back(h);
    }
    return ops::ConcatV2(s, last_h, 0);
  }

  // One loop (or its 28 steps unrolled) over `images` [batch, 784]: the last
  // h [batch, units].
  static StatusOr<Output> LstmTower(const Scope& s, const Output& images, const Output& w,
                                    const Output& b, const Output& no_peepholes, bool unrolled) {
    // Time-major rows [28, batch, 28]: step t reads row t of every image.
    const Output rows = ops::Transpose(
        s, ops::Reshape(s, images, ops::Const(s, {-1, kRows, kColumns})), ops::Const(s, {1, 0, 2}));
    const Output batch = ops::Slice(s, ops::Shape(s, images), {0}, {1});
    const Output zeros =
        ops::Fill(s, ops::ConcatV2(s, {batch, ops::Const(s, {kLstmUnits})}, 0), 0.0f);
    // One step: (t, cs, h) -> (t + 1, cs', h').
    auto step = [&](const Scope& body, const std::vector<Output>& vars,
                    std::vector<Output>* next) -> Status {
      const Output x = ops::GatherV2(body, rows, vars[0], 0);
      Operation cell =
          ops::LSTMBlockCell(body, x, vars[1], vars[2], w, no_peepholes, no_peepholes, no_peepholes,
                             b, {{"forget_bias", 1.0f}, {"cell_clip", -1.0f}});
      *next = {ops::AddV2(body, vars[0], 1), cell.output(1), cell.output(6)};
      return body.status();
    };
    std::vector<Output> vars = {ops::Const(s, 0), zeros, zeros};
    if (unrolled) {
      for (int t = 0; t < kRows; ++t) {
        std::vector<Output> next;
        WEIR_RETURN_IF_ERROR(step(s, vars, &next));
        vars = next;
      }
    } else {
      std::vector<Output> done;
      WEIR_RETURN_IF_ERROR(ops::WhileLoop(
          s, vars,
          [](const Scope& cond, const std::vector<Output>& v, Output* more) {
            *more = ops::Less(cond, v[0], kRows);
            return cond.status();
          },
          step, &done));
      vars = done;
    }
    WEIR_RETURN_IF_ERROR(s.status());
    return vars[2];
  }

  // Inverted dropout: keeps each unit with probability 1 - rate and scales
  // it by 1 / (1 - rate), so evaluation (rate 0) needs no rescaling.
  Output Dropout(const Output& x, const Output& rate) {
    Scope s = scope_.NewSubScope("dropout");
    Output u = ops::RandomUniform(s, ops::Shape(s, x), DT_FLOAT, RandomSeeds());
    Output keep = ops::Cast(s, ops::GreaterEqual(s, u, rate), DT_FLOAT);
    return ops::Mul(s, x, ops::RealDiv(s, keep, ops::Sub(s, 1.0f, rate)));
  }

 private:
  AttrMap RandomSeeds() { return {{"seed", seed_}, {"seed2", ++stream_}}; }

  Scope scope_;
  int64_t seed_;
  int64_t stream_ = 0;
  Model* model_;
};

}  // namespace

StatusOr<ModelKind> ParseModelKind(const std::string& name) {
  if (name == "mlp") return ModelKind::kMlp;
  if (name == "cnn") return ModelKind::kCnn;
  if (name == "lstm") return ModelKind::kLstm;
  return errors::InvalidArgument("unknown model '", name, "': expected mlp, cnn or lstm");
}

StatusOr<Model> BuildModel(const Scope& scope, ModelKind kind, int64_t seed,
                           const ModelInput* input, int towers) {
  const bool lstm = kind == ModelKind::kLstm || kind == ModelKind::kLstmUnrolled;
  if (towers < 1 || towers > kMaxTowers || (!lstm && towers != 1)) {
    return errors::InvalidArgument("towers must be in [1, ", kMaxTowers,
                                   "] for the lstm model and 1 for the others, got ", towers);
  }
  Model m;
  if (input != nullptr) {
    // Identities forward the dequeued buffers (no copy) under the feedable names.
    m.images = ops::Identity(scope.WithOpName("images"), input->images);
    m.labels = ops::Identity(scope.WithOpName("labels"), input->labels);
  } else {
    m.images = ops::Placeholder(scope.WithOpName("images"), DT_FLOAT,
                                {{"shape", PartialShape({-1, 28 * 28})}});
    m.labels =
        ops::Placeholder(scope.WithOpName("labels"), DT_INT32, {{"shape", PartialShape({-1})}});
  }
  m.dropout_rate = ops::Placeholder(scope.WithOpName("dropout_rate"), DT_FLOAT,
                                    {{"shape", PartialShape(std::vector<int64_t>{})}});
  LayerBuilder layers(scope, seed, &m);
  if (kind == ModelKind::kMlp) {
    Output h = layers.Dense("dense1", m.images, 28 * 28, 512, true);
    h = layers.Dense("dense2", h, 512, 512, true);
    m.logits = layers.Dense("logits", h, 512, kNumClasses, false);
  } else if (lstm) {
    WEIR_ASSIGN_OR_RETURN(Output h,
                          layers.Lstm(m.images, kind == ModelKind::kLstmUnrolled, towers));
    m.logits = layers.Dense("logits", h, kLstmUnits, kNumClasses, false);
  } else {
    Output x = ops::Reshape(scope, m.images, ops::Const(scope, {-1, 28, 28, 1}));
    x = layers.ConvPool("conv1", x, 1, 32);
    x = layers.ConvPool("conv2", x, 32, 64);
    x = ops::Reshape(scope, x, ops::Const(scope, {-1, 7 * 7 * 64}));
    x = layers.Dense("dense", x, 7 * 7 * 64, 1024, true);
    x = layers.Dropout(x, m.dropout_rate);
    m.logits = layers.Dense("logits", x, 1024, kNumClasses, false);
    m.default_dropout_rate = 0.4f;
  }
  Operation xent = ops::SparseSoftmaxCrossEntropyWithLogits(scope, m.logits, m.labels);
  m.loss = ops::Mean(scope.WithOpName("loss"), xent.output(0), ops::Const(scope, {0}));
  Output predicted = ops::ArgMax(scope, m.logits, 1, {{"output_type", DT_INT32}});
  m.correct = ops::Sum(scope.WithOpName("correct"),
                       ops::Cast(scope, ops::Equal(scope, predicted, m.labels), DT_INT32),
                       ops::Const(scope, {0}));
  WEIR_RETURN_IF_ERROR(scope.status());
  return m;
}

}  // namespace fashion_mnist
}  // namespace weir
