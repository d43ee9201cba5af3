// Discrete Fourier transforms over the innermost 1, 2 or 3 dims: FFT*,
// IFFT* (complex to complex), RFFT* (real to the non-negative half of the
// last dim's spectrum, the input cropped or zero-padded to fft_length) and
// IRFFT* (back to real, the spectrum cropped or zero-padded to
// fft_length[:-1] + [fft_length[-1] / 2 + 1]). TensorFlow's declarations;
// kernels in kernels/fft_kernels.cc.
#include <string>

#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

// FFT*: input's shape, of rank >= `rank`.
Status ComplexFftShape(InferenceContext* c, int rank) {
  PartialShape unused;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, rank, &unused));
  c->set_output(0, c->input(0));
  return Status::OK();
}

// RFFT*/IRFFT*: the inner `rank` dims become fft_length (the last halved
// plus one for RFFT) when fft_length is a constant, else unknown.
Status RealFftShape(InferenceContext* c, int rank, bool forward) {
  PartialShape input, length;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, rank, &input));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &length));
  if (length.dim(0) != PartialShape::kUnknown && length.dim(0) != rank) {
    return errors::InvalidArgument("fft_length must have ", rank, " elements, not ", length.dim(0));
  }
  if (!input.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  std::vector<int64_t> dims = input.dim_sizes();
  const int first = static_cast<int>(dims.size()) - rank;
  const Tensor* fft_length = c->input_tensor(1);
  for (int i = 0; i < rank; ++i) {
    int64_t d = PartialShape::kUnknown;
    if (fft_length != nullptr && fft_length->NumElements() == rank) {
      d = fft_length->data<int32_t>()[i];
      if (d < 0) return errors::InvalidArgument("fft_length ", d, " must not be negative");
      if (forward && i == rank - 1) d = d / 2 + 1;
    }
    dims[first + i] = d;
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

}  // namespace

void RegisterSignalOps(OpRegistry* registry) {
  for (int rank = 1; rank <= 3; ++rank) {
    const std::string suffix = rank == 1 ? "" : std::to_string(rank) + "D";
    for (const bool inverse : {false, true}) {
      const std::string name = (inverse ? "IFFT" : "FFT") + suffix;
      registry->Register(
          OpDefBuilder(name)
              .Input("input: Tcomplex")
              .Output("output: Tcomplex")
              .Attr("Tcomplex: {complex64, complex128} = complex64")
              .SetShapeFn([rank](InferenceContext* c) { return ComplexFftShape(c, rank); })
              .Doc(inverse ? "The inverse DFT over the innermost dims (1/n "
                             "scaled)."
                           : "The DFT over the innermost dims."));
    }
    registry->Register(
        OpDefBuilder("RFFT" + suffix)
            .Input("input: Treal")
            .Input("fft_length: int32")
            .Output("output: Tcomplex")
            .Attr("Treal: {float, double} = float")
            .Attr("Tcomplex: {complex64, complex128} = complex64")
            .SetShapeFn([rank](InferenceContext* c) { return RealFftShape(c, rank, true); })
            .Doc("The DFT of real input over the innermost dims, cropped or "
                 "zero-padded to fft_length; the last dim keeps its "
                 "fft_length / 2 + 1 non-negative frequencies."));
    registry->Register(
        OpDefBuilder("IRFFT" + suffix)
            .Input("input: Tcomplex")
            .Input("fft_length: int32")
            .Output("output: Treal")
            .Attr("Treal: {float, double} = float")
            .Attr("Tcomplex: {complex64, complex128} = complex64")
            .SetShapeFn([rank](InferenceContext* c) { return RealFftShape(c, rank, false); })
            .Doc("The real inverse of RFFT: the half spectrum is cropped or "
                 "zero-padded, extended by Hermitian symmetry and inverted."));
  }
}

}  // namespace weir
