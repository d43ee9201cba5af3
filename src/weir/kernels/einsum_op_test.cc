// Einsum's kernel (and, through RunKernel, its shape function) against a
// brute-force reference that sums the product of the operands over every
// assignment of every label; and its errors for malformed equations and
// operands that do not fit them.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "weir/kernels/cwise_test_util.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

// Einsum by definition, for equations of letters only ("ij,jk->ik").
std::vector<double> Reference(const std::string& equation, const std::vector<Tensor>& inputs,
                              std::vector<int64_t>* out_dims) {
  const size_t arrow = equation.find("->");
  const std::string output = equation.substr(arrow + 2);
  std::vector<std::string> terms;
  std::string lhs = equation.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (size_t a = 0; a < terms[i].size(); ++a) size[terms[i][a]] = inputs[i].shape().dim_size(a);
  }
  std::vector<char> labels;
  for (auto& [label, s] : size) labels.push_back(label);
  out_dims->clear();
  int64_t out_count = 1;
  for (char c : output) {
    out_dims->push_back(size[c]);
    out_count *= size[c];
  }
  std::vector<double> out(out_count, 0.0);
  std::vector<std::vector<double>> values;
  for (const Tensor& t : inputs) values.push_back(ToDoubles(t));
  int64_t total = 1;
  for (char c : labels) total *= size[c];
  std::map<char, int64_t> at;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat;
    for (int i = static_cast<int>(labels.size()) - 1; i >= 0; --i) {
      at[labels[i]] = rest % size[labels[i]];
      rest /= size[labels[i]];
    }
    double product = 1;
    for (size_t i = 0; i < terms.size(); ++i) {
      int64_t offset = 0;
      for (size_t a = 0; a < terms[i].size(); ++a) offset = offset * inputs[i].shape().dim_size(a) + at[terms[i][a]];
      product *= values[i][offset];
    }
    int64_t offset = 0;
    for (char c : output) offset = offset * size[c] + at[c];
    out[offset] += product;
  }
  return out;
}

template <typename T>
Tensor Ramp(const TensorShape& shape, int seed) {
  std::vector<T> values(shape.num_elements());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(std::sin(1.0 + seed + 0.7 * i));
  return Tensor::FromVector(values, shape);
}

StatusOr<std::vector<Tensor>> Einsum(const std::string& equation, std::vector<Tensor> inputs) {
  const DType dtype = inputs[0].dtype();
  const int64_t n = static_cast<int64_t>(inputs.size());
  return RunKernel("Einsum", {{"equation", equation}, {"N", n}, {"T", dtype}}, std::move(inputs));
}

struct Case {
  std::string equation;
  std::vector<TensorShape> shapes;
};

template <typename T>
void CheckAgainstReference() {
  // Float sums of up to 200 products: ~1e-5 of rounding.
  const double tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-12;
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}},          // matmul
      {"ij,kj->ik", {{3, 4}, {5, 4}}},          // transposed operand
      {"ji,jk->ki", {{4, 3}, {4, 5}}},          // transposed output
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},  // batch matmul
      {"bij,bjk->kbi", {{2, 3, 4}, {2, 4, 5}}},
      {"i,j->ij", {{3}, {4}}},                   // outer
      {"i,i->", {{5}, {5}}},                     // dot
      {"ij,ij->ij", {{3, 4}, {3, 4}}},           // elementwise
      {"ij,ij->i", {{3, 4}, {3, 4}}},
      {"ij->ji", {{3, 4}}},                      // transpose
      {"ijk->kij", {{2, 3, 4}}},
      {"ij->", {{3, 4}}},                        // sums
      {"ij->j", {{3, 4}}},
      {"ijk->j", {{2, 3, 4}}},
      {"ii->i", {{4, 4}}},                       // diagonal
      {"ii->", {{4, 4}}},                        // trace
      {"iij->ji", {{3, 3, 2}}},
      {"i->ii", {{3}}},                          // fill a diagonal
      {"ij->iij", {{3, 2}}},
      {"ijk,jl->il", {{2, 3, 4}, {3, 5}}},       // k summed out of x alone
      {"ij,jkl->ik", {{2, 3}, {3, 4, 5}}},       // l summed out of y alone
      {"ii,i->i", {{3, 3}, {3}}},
      {"abc,cd->dba", {{2, 3, 4}, {4, 2}}},
      {"bij,jk->bik", {{3, 2, 4}, {4, 2}}},      // batch only in x: free
      {"Ab,bC->CA", {{2, 3}, {3, 4}}},           // upper-case labels
      {"ab,b->a", {{2, 0}, {0}}},                // empty contraction: zeros
      {"ab,bc->ac", {{0, 3}, {3, 4}}},           // empty output
      {"ij,jk->ik", {{300, 200}, {200, 100}}},   // one product split over the pool
      {"bij,bkj->bik", {{5, 40, 30}, {5, 20, 30}}},  // many products, one per task
      // Operands used in place, stored transposed: x as [b, k, m], y as [b, n, k].
      {"bji,bkj->bik", {{5, 30, 40}, {5, 20, 30}}},
      {"ji,kj->ik", {{200, 300}, {100, 200}}},
      {"ji,jk->ik", {{3, 4}, {3, 5}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.equation);
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < c.shapes.size(); ++i) inputs.push_back(Ramp<T>(c.shapes[i], static_cast<int>(i)));
    std::vector<int64_t> dims;
    const std::vector<double> expected = Reference(c.equation, inputs, &dims);
    auto out = Einsum(c.equation, inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape(dims));
    const std::vector<double> actual = ToDoubles((*out)[0]);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_TRUE(IsClose(actual[i], expected[i], tolerance, tolerance)) << i << ": " << actual[i] << " vs " << expected[i];
    }
  }
}

TEST(EinsumOpTest, AgainstReferenceFloat) { CheckAgainstReference<float>(); }
TEST(EinsumOpTest, AgainstReferenceDouble) { CheckAgainstReference<double>(); }

TEST(EinsumOpTest, EllipsisBroadcastsBatchDims) {
  // [2,1,2,3] x [5,3,4]: the batch dims [2,1] and [5] broadcast to [2,5].
  Tensor x = Ramp<double>({2, 1, 2, 3}, 0), y = Ramp<double>({5, 3, 4}, 1);
  auto out = Einsum("...ij,...jk->...ik", {x, y});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), TensorShape({2, 5, 2, 4}));
  const std::vector<double> xs = ToDoubles(x), ys = ToDoubles(y), zs = ToDoubles((*out)[0]);
  for (int a = 0; a < 2; ++a) for (int b = 0; b < 5; ++b) for (int i = 0; i < 2; ++i) for (int k = 0; k < 4; ++k) {
    double sum = 0;
    for (int j = 0; j < 3; ++j) sum += xs[(a * 2 + i) * 3 + j] * ys[(b * 3 + j) * 4 + k];
    EXPECT_NEAR(zs[((a * 5 + b) * 2 + i) * 4 + k], sum, 1e-12);
  }
  // "..." in the middle, and an operand whose "..." is empty.
  Tensor p = Ramp<double>({2, 5, 3}, 2), q = Ramp<double>({3}, 3);
  auto middle = Einsum("i...j,j->i...", {p, q});
  ASSERT_TRUE(middle.ok()) << middle.status();
  std::vector<int64_t> dims;
  const std::vector<double> expected = Reference("iaj,j->ia", {p, q}, &dims);
  EXPECT_EQ((*middle)[0].shape(), TensorShape({2, 5}));
  const std::vector<double> got = ToDoubles((*middle)[0]);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-12);
  auto transpose = Einsum("...ij->...ji", {Ramp<float>({2, 3}, 0)});
  ASSERT_TRUE(transpose.ok()) << transpose.status();
  EXPECT_EQ((*transpose)[0].shape(), TensorShape({3, 2}));
}

TEST(EinsumOpTest, ImplicitOutputIsNumPys) {
  // "ij,jk": j appears twice, so the output is "ik".
  Tensor x = Ramp<double>({3, 4}, 0), y = Ramp<double>({4, 2}, 1);
  auto implicit = Einsum("ij,jk", {x, y});
  auto explicit_out = Einsum("ij,jk->ik", {x, y});
  ASSERT_TRUE(implicit.ok()) << implicit.status();
  EXPECT_EQ(ToDoubles((*implicit)[0]), ToDoubles((*explicit_out)[0]));
  auto transpose = Einsum("ba", {x});  // labels in alphabetical order: "ab"
  ASSERT_TRUE(transpose.ok()) << transpose.status();
  EXPECT_EQ((*transpose)[0].shape(), TensorShape({4, 3}));
}

TEST(EinsumOpTest, BadEquationsAreInvalidArgument) {
  Tensor m = Ramp<float>({2, 3}, 0), v = Ramp<float>({3}, 1);
  const std::vector<std::pair<std::string, std::vector<Tensor>>> bad = {
      {"ij,jk->ik", {m}},              // two terms, one operand
      {"ij->ij->i", {m}},              // two arrows
      {"i1->i", {m}},                  // not a letter
      {"i.j->i", {m}},                 // a lone '.'
      {"...i...->i", {m}},             // two ellipses
      {"ij->k", {m}},                  // output label in no operand
      {"ijk->i", {m}},                 // rank 2 for three labels
      {"i->i", {m}},                   // rank 2 for one label
      {"ij,ij->ij", {m, Ramp<float>({3, 2}, 1)}},  // i is 2 and 3
      {"ij,jk->ik", {m, Ramp<float>({4, 2}, 1)}},  // j is 3 and 4
      {"ii->i", {m}},                  // a diagonal of a non-square
      {"...i->i", {m}},                // "..." has a dim but the output lacks it
      {"...ij,...jk->...ik", {Ramp<float>({2, 2, 3}, 0), Ramp<float>({3, 3, 2}, 1)}},  // 2 vs 3
  };
  for (const auto& [equation, inputs] : bad) {
    SCOPED_TRACE(equation);
    auto out = Einsum(equation, inputs);
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
    EXPECT_TRUE(Contains(out.status(), equation)) << out.status();
  }
  // Three operands: TensorFlow 2.21 takes one or two.
  auto three = Einsum("i,i,i->i", {v, v, v});
  ASSERT_FALSE(three.ok());
  EXPECT_TRUE(Contains(three.status(), "1 or 2 operands")) << three.status();
}

TEST(EinsumOpTest, ShapeFunctionInfersTheOutput) {
  const int64_t kUnknown = PartialShape::kUnknown;
  auto infer = [](const std::string& equation, std::vector<PartialShape> shapes) {
    const int64_t n = static_cast<int64_t>(shapes.size());
    return InferShapes("Einsum", {{"equation", equation}, {"N", n}, {"T", DT_FLOAT}}, shapes);
  };
  auto matmul = infer("ij,jk->ik", {{kUnknown, 3}, {3, 5}});
  ASSERT_TRUE(matmul.ok()) << matmul.status();
  EXPECT_EQ((*matmul)[0], PartialShape({kUnknown, 5}));
  auto unknown_rank = infer("ij,jk->ki", {PartialShape::UnknownRank(), {3, 5}});
  ASSERT_TRUE(unknown_rank.ok()) << unknown_rank.status();
  EXPECT_EQ((*unknown_rank)[0], PartialShape({5, kUnknown}));
  auto ellipsis = infer("...ij,...jk->...ik", {PartialShape::UnknownRank(), {3, 5}});
  ASSERT_TRUE(ellipsis.ok()) << ellipsis.status();
  EXPECT_FALSE((*ellipsis)[0].known_rank());
  auto broadcast = infer("...ij,...jk->...ik", {{2, 1, 4, 3}, {kUnknown, 3, 5}});
  ASSERT_TRUE(broadcast.ok()) << broadcast.status();
  EXPECT_EQ((*broadcast)[0], PartialShape({2, kUnknown, 4, 5}));
  auto mismatch = infer("ij,jk->ik", {{2, 3}, {4, 5}});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_TRUE(Contains(mismatch.status(), "label 'j' has sizes 3 and 4")) << mismatch.status();
  // An output too large for int64 is refused, not wrapped.
  const int64_t big = int64_t{1} << 40;
  auto huge = infer("i,j->ij", {{big}, {big}});
  EXPECT_FALSE(huge.ok());
}

}  // namespace
}  // namespace weir
