// Gradients of Einsum (every operand, diagonals, summed labels, "..."
// broadcasting) and of LeakyRelu, LeakyReluGrad, Atan2, Lgamma, Digamma and
// Polygamma, against central finite differences; second derivatives where
// the gradient is itself built of differentiable ops.
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/train/gradients.h"
#include "weir/train/gradients_test_util.h"

namespace weir {
namespace {

Tensor Spread(const TensorShape& shape, double offset = 0) {
  std::vector<double> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = offset + std::sin(0.9 * i + 0.3);
  return Tensor::FromVector<double>(v, shape);
}

TEST(EinsumGradientsTest, EveryEquationFamily) {
  const std::vector<std::pair<std::string, std::vector<TensorShape>>> cases = {
      {"ij,jk->ik", {{2, 3}, {3, 4}}},
      {"ij,kj->ki", {{2, 3}, {4, 3}}},
      {"bij,bjk->bik", {{2, 2, 3}, {2, 3, 2}}},
      {"i,j->ij", {{3}, {2}}},
      {"i,i->", {{4}, {4}}},
      {"ij->ji", {{2, 3}}},
      {"ij->", {{2, 3}}},
      {"ijk->j", {{2, 3, 2}}},
      {"ii->i", {{3, 3}}},
      {"ii->", {{3, 3}}},
      {"i->ii", {{3}}},
      {"ijk,jl->il", {{2, 3, 2}, {3, 2}}},  // k summed out of x alone
      {"ij,jkl->ik", {{2, 3}, {3, 2, 2}}},  // l summed out of y alone
      {"ii,i->i", {{3, 3}, {3}}},
      {"...ij,...jk->...ik", {{2, 2, 3}, {2, 3, 2}}},
      {"...ij,...jk->...ik", {{2, 1, 2, 3}, {3, 3, 2}}},  // batch dims broadcast
      {"...ij,jk->...ik", {{2, 2, 3}, {3, 2}}},           // y without "..."
      {"ij,...jk->...ik", {{2, 3}, {2, 3, 2}}},           // x without "..."
      {"i...j,j->i...", {{2, 2, 3}, {3}}},
  };
  for (const auto& [equation, shapes] : cases) {
    SCOPED_TRACE(equation);
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < shapes.size(); ++i) inputs.push_back(Spread(shapes[i], 0.1 * i));
    ExpectGradientsMatch(inputs, [&, eq = equation](const Scope& s, const std::vector<Output>& in) {
      return ops::Einsum(s, InputList(in.begin(), in.end()), eq);
    });
  }
}

TEST(EinsumGradientsTest, ElementwiseOps) {
  Tensor mixed = Values({-1.7, -0.6, 0.4, 1.3, 2.1, -0.2}, {2, 3});
  Tensor positive = Values({0.3, 0.7, 1.1, 1.6, 2.3, 4.5}, {2, 3});
  Tensor row = Values({0.8, -1.2, 1.9}, {3});
  for (float alpha : {0.2f, 0.05f}) {
    ExpectGradientsMatch({mixed}, [&](const Scope& s, const std::vector<Output>& in) {
      return ops::LeakyRelu(s, in[0], {{"alpha", alpha}});
    });
    // LeakyReluGrad in both inputs (piecewise constant in the features).
    ExpectGradientsMatch({positive, mixed}, [&](const Scope& s, const std::vector<Output>& in) {
      return ops::LeakyReluGrad(s, in[0], in[1], {{"alpha", alpha}});
    });
  }
  for (const char* op : {"Lgamma", "Digamma"}) {
    SCOPED_TRACE(op);
    ExpectGradientsMatch({positive}, [&](const Scope& s, const std::vector<Output>& in) {
      return AddOp(s, op, {in[0]}).output(0);
    });
  }
  // Lgamma's second derivative goes through Digamma and Polygamma.
  ExpectGradientsMatch({positive}, [](const Scope& s, const std::vector<Output>& in) {
    std::vector<Output> grads;
    Status status = AddSymbolicGradients(s, {ops::Lgamma(s, in[0])}, {in[0]}, &grads);
    if (!status.ok()) s.UpdateStatus(status);
    return status.ok() ? grads[0] : Output();
  }, 1e-5);
  // Atan2 with broadcasting either way, all four quadrants.
  ExpectGradientsMatch({mixed, row}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::Atan2(s, in[0], in[1]);
  });
  ExpectGradientsMatch({row, mixed}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::Atan2(s, in[0], in[1]);
  });
  // Polygamma: only x is differentiable; the order is a constant.
  ExpectGradientsMatch({positive}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::Polygamma(s, ops::Const(s, Values({0, 1, 2}, {3})), in[0]);
  });
}

}  // namespace
}  // namespace weir
