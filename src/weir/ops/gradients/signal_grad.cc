// Gradients of the Fourier transforms (ops/signal_ops.cc), TensorFlow's
// convention for complex values. With N the transform's size:
//   FFT:   IFFT(g) * N  = conj(FFT(conj(g)))
//   IFFT:  FFT(g) / N   = conj(IFFT(conj(g)))
//   RFFT:  N * IRFFT(g * m), m = 1 at the zero (and even Nyquist) frequency
//          and 1/2 elsewhere (each of those stands for two terms of the full
//          spectrum), cropped or zero-padded back to the input's dims;
//   IRFFT: RFFT(g) * c / N, c = 1/m, cropped or zero-padded likewise.
// The real forms need fft_length as a constant and the input's inner dims
// statically known; otherwise the gradient is Unimplemented, naming why.
#include <string>

#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

using Grads = std::vector<Output>;

std::string Suffix(int rank) { return rank == 1 ? "" : std::to_string(rank) + "D"; }

Output Transform(const Scope& s, const std::string& op, const Output& x, const Output& length) {
  std::vector<OpArg> inputs = {x};
  AttrMap attrs;
  if (length.valid()) {
    inputs.push_back(length);
    // The output dtype attr follows the input's width.
    const bool wide = x.dtype() == DT_DOUBLE || x.dtype() == DT_COMPLEX128;
    if (op[0] == 'R') attrs["Tcomplex"] = AttrValue(wide ? DT_COMPLEX128 : DT_COMPLEX64);
    if (op[0] == 'I') attrs["Treal"] = AttrValue(wide ? DT_DOUBLE : DT_FLOAT);
  }
  return AddOp(s, op, inputs, attrs).output(0);
}

// `g` ([..., d_1..d_rank]) cropped or zero-padded to the inner dims `want`.
Output Fit(const Scope& s, const Output& g, const std::vector<int64_t>& have,
           const std::vector<int64_t>& want, int outer) {
  const int rank = static_cast<int>(want.size());
  std::vector<int64_t> begin(outer + rank, 0), size(outer + rank, -1), pads(2 * (outer + rank), 0);
  bool slice = false, pad = false;
  for (int k = 0; k < rank; ++k) {
    if (have[k] > want[k]) size[outer + k] = want[k], slice = true;
    if (have[k] < want[k]) pads[2 * (outer + k) + 1] = want[k] - have[k], pad = true;
  }
  Output out = g;
  if (slice) out = ops::Slice(s, out, IntVector(s, begin), IntVector(s, size));
  if (pad) {
    out = ops::Pad(s, out, ops::Reshape(s, IntVector(s, pads), IntVector(s, {outer + rank, 2})));
  }
  return out;
}

// A complex constant shaped [n] holding `values` (to scale the last dim).
Output ComplexVector(const Scope& s, const std::vector<double>& values, DType complex) {
  const DType part = complex == DT_COMPLEX128 ? DT_DOUBLE : DT_FLOAT;
  Output re = part == DT_DOUBLE ? ops::Const(s, Tensor::FromVector<double>(values))
                                : ops::Const(s, Tensor::FromVector<float>(std::vector<float>(
                                                    values.begin(), values.end())));
  return ops::Complex(s, re, ops::ZerosLike(s, re), {{"Tout", complex}});
}

// The static facts the real transforms' gradients need: fft_length, the
// input's inner dims and its rank.
Status RealFacts(const Operation& op, int rank, std::vector<int64_t>* length,
                 std::vector<int64_t>* inner, int* outer) {
  std::optional<std::vector<int64_t>> fft_length = ConstantInts(ForwardInput(op, 1));
  const PartialShape shape = ForwardInput(op, 0).shape();
  if (!fft_length || static_cast<int>(fft_length->size()) != rank || !shape.known_rank()) {
    return errors::Unimplemented("the gradient of ", op.node()->type_string(), " (node ",
                                 op.node()->name(),
                                 ") needs fft_length as a constant and the input's rank");
  }
  *outer = shape.rank() - rank;
  inner->clear();
  for (int k = 0; k < rank; ++k) {
    const int64_t d = shape.dim(*outer + k);
    if (d == PartialShape::kUnknown) {
      return errors::Unimplemented("the gradient of ", op.node()->type_string(), " (node ",
                                   op.node()->name(), ") needs the input's inner dims, not ",
                                   shape);
    }
    inner->push_back(d);
  }
  *length = *fft_length;
  return Status::OK();
}

// m (forward) or c = 1/m (inverse) for a last dim of fft length n.
std::vector<double> HalfSpectrumWeights(int64_t n, bool inverse) {
  std::vector<double> w(n / 2 + 1, inverse ? 2.0 : 0.5);
  w[0] = 1.0;
  if (n % 2 == 0) w.back() = 1.0;
  return w;
}

void RegisterRank(GradientRegistry* registry, int rank) {
  const std::string suffix = Suffix(rank);
  registry->Register(
      "FFT" + suffix, [suffix](const Scope& s, const Operation&, const Grads& g, Grads* grads) {
        *grads = {ops::Conj(s, Transform(s, "FFT" + suffix, ops::Conj(s, g[0]), Output()))};
        return s.status();
      });
  registry->Register(
      "IFFT" + suffix, [suffix](const Scope& s, const Operation&, const Grads& g, Grads* grads) {
        *grads = {ops::Conj(s, Transform(s, "IFFT" + suffix, ops::Conj(s, g[0]), Output()))};
        return s.status();
      });
  registry->Register("RFFT" + suffix, [suffix, rank](const Scope& s, const Operation& op,
                                                     const Grads& g, Grads* grads) {
    std::vector<int64_t> length, inner;
    int outer;
    WEIR_RETURN_IF_ERROR(RealFacts(op, rank, &length, &inner, &outer));
    double n = 1;
    for (int64_t l : length) n *= static_cast<double>(l);
    std::vector<double> m = HalfSpectrumWeights(length.back(), false);
    for (double& v : m) v *= n;
    Output weighted = ops::Mul(s, g[0], ComplexVector(s, m, g[0].dtype()));
    Output dx = Transform(s, "IRFFT" + suffix, weighted, ForwardInput(op, 1));
    *grads = {Fit(s, dx, length, inner, outer), Output()};
    return s.status();
  });
  registry->Register("IRFFT" + suffix, [suffix, rank](const Scope& s, const Operation& op,
                                                      const Grads& g, Grads* grads) {
    std::vector<int64_t> length, inner;
    int outer;
    WEIR_RETURN_IF_ERROR(RealFacts(op, rank, &length, &inner, &outer));
    double n = 1;
    for (int64_t l : length) n *= static_cast<double>(l);
    std::vector<double> c = HalfSpectrumWeights(length.back(), true);
    for (double& v : c) v /= n;
    Output spectrum = Transform(s, "RFFT" + suffix, g[0], ForwardInput(op, 1));
    Output dy = ops::Mul(s, spectrum, ComplexVector(s, c, ForwardInput(op, 0).dtype()));
    std::vector<int64_t> half = length;
    half.back() = length.back() / 2 + 1;
    *grads = {Fit(s, dy, half, inner, outer), Output()};
    return s.status();
  });
}

}  // namespace

void RegisterSignalGradients(GradientRegistry* registry) {
  for (int rank = 1; rank <= 3; ++rank) RegisterRank(registry, rank);
}

}  // namespace weir
