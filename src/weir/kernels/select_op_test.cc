// Select (TensorFlow v1 rules) and SelectV2 (NumPy broadcasting of all
// three inputs) against references computed element by element.
#include <gtest/gtest.h>

#include <string>

#include "weir/kernels/cwise_test_util.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

Tensor Conditions(const TensorShape& shape, int seed) {
  Tensor values = Values<int32_t>(shape, seed);
  Tensor condition(DT_BOOL, shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    condition.data<bool>()[i] = values.data<int32_t>()[i] > 0;
  }
  return condition;
}

TEST(SelectTest, ConditionOfTheSameShape) {
  for (const TensorShape& shape : {TensorShape({2, 3}), TensorShape({}), TensorShape({0, 2}),
                                   TensorShape({1, 1, 5}), TensorShape({300, 301})}) {
    Tensor c = Conditions(shape, 1);
    Tensor t = Values<float>(shape, 2), e = Values<float>(shape, 3);
    auto out = RunKernel("Select", {{"T", DT_FLOAT}}, {c, t, e});
    ASSERT_TRUE(out.ok()) << shape << ": " << out.status();
    ASSERT_EQ((*out)[0].shape(), shape);
    std::vector<double> z = ToDoubles((*out)[0]), tv = ToDoubles(t), ev = ToDoubles(e);
    for (int64_t i = 0; i < shape.num_elements(); ++i) {
      ASSERT_EQ(z[i], c.data<bool>()[i] ? tv[i] : ev[i]) << shape << " at " << i;
    }
  }
}

TEST(SelectTest, ScalarConditionPicksAWholeInput) {
  Tensor t = Values<int64_t>(TensorShape({4, 2}), 1), e = Values<int64_t>(TensorShape({4, 2}), 2);
  for (bool pick : {true, false}) {
    auto out = RunKernel("Select", {{"T", DT_INT64}}, {Tensor::Scalar<bool>(pick), t, e});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE((*out)[0].SharesBufferWith(pick ? t : e));
  }
}

TEST(SelectTest, VectorConditionPicksRows) {
  for (const TensorShape& shape :
       {TensorShape({3, 2}), TensorShape({4, 2, 3}), TensorShape({2, 0}), TensorShape({5, 1})}) {
    Tensor c = Conditions(TensorShape({shape.dim_size(0)}), 4);
    Tensor t = Values<double>(shape, 5), e = Values<double>(shape, 6);
    auto out = RunKernel("Select", {{"T", DT_DOUBLE}}, {c, t, e});
    ASSERT_TRUE(out.ok()) << shape << ": " << out.status();
    std::vector<double> z = ToDoubles((*out)[0]), tv = ToDoubles(t), ev = ToDoubles(e);
    const int64_t row = shape.num_elements() / shape.dim_size(0);
    for (int64_t i = 0; i < shape.num_elements(); ++i) {
      ASSERT_EQ(z[i], c.data<bool>()[i / row] ? tv[i] : ev[i]) << shape << " at " << i;
    }
  }
}

TEST(SelectTest, OtherDtypes) {
  Tensor c = Tensor::FromVector<bool>({true, false, true});
  auto out = RunKernel("Select", {{"T", DT_BOOL}},
                       {c, Tensor::FromVector<bool>({true, true, true}),
                        Tensor::FromVector<bool>({false, false, false})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{1, 0, 1}));
  auto ints = RunKernel("Select", {{"T", DT_INT32}},
                        {c, Tensor::FromVector<int32_t>({1, 2, 3}),
                         Tensor::FromVector<int32_t>({-1, -2, -3})});
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(ToDoubles((*ints)[0]), (std::vector<double>{1, -2, 3}));
}

TEST(SelectTest, BadShapesAreErrors) {
  const Tensor t(DT_FLOAT, TensorShape({3, 2}));
  struct Case {
    TensorShape condition, e;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {{3, 2}, {2, 3}, "Select: t and e must have the same shape, not [3,2] and [2,3] "
                            "(dtype float)"},
           {{2}, {3, 2}, "Select: condition [2] must have one element per row of t and e [3,2] "
                         "(dtype float)"},
           {{2, 3}, {3, 2}, "Select: condition [2,3] must be a scalar, a vector over the first "
                            "dim of t and e, or their shape [3,2] (dtype float)"},
           {{3, 1}, {3, 2}, "Select: condition [3,1] must be a scalar, a vector over the first "
                            "dim of t and e, or their shape [3,2] (dtype float)"},
       }) {
    auto out = RunKernel("Select", {{"T", DT_FLOAT}},
                         {Tensor(DT_BOOL, c.condition), t, Tensor(DT_FLOAT, c.e)});
    ASSERT_FALSE(out.ok()) << c.condition;
    EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
    EXPECT_EQ(out.status().message(), c.message);
  }
  // A vector condition with vector data is elementwise, so sizes must match.
  auto out = RunKernel("Select", {{"T", DT_FLOAT}},
                       {Tensor(DT_BOOL, TensorShape({2})), Tensor(DT_FLOAT, TensorShape({3})),
                        Tensor(DT_FLOAT, TensorShape({3}))});
  EXPECT_FALSE(out.ok());
}

struct SelectV2Case {
  TensorShape c, t, e, out;
};

TEST(SelectV2Test, BroadcastsAllThreeInputs) {
  const std::vector<SelectV2Case> cases = {
      {{2, 3}, {2, 3}, {2, 3}, {2, 3}},
      {{}, {2, 3}, {2, 3}, {2, 3}},
      {{}, {}, {}, {}},
      {{2, 3}, {}, {}, {2, 3}},
      {{2, 3}, {2, 3}, {}, {2, 3}},
      {{2, 3}, {}, {2, 3}, {2, 3}},
      {{}, {2, 3}, {}, {2, 3}},
      {{3}, {2, 3}, {2, 1}, {2, 3}},
      {{2, 1}, {3}, {1, 3}, {2, 3}},
      {{4, 1, 1}, {1, 5, 1}, {1, 1, 6}, {4, 5, 6}},
      {{1}, {2, 3}, {2, 3}, {2, 3}},
      {{5, 1, 3}, {2, 1, 4, 1}, {1}, {2, 5, 4, 3}},
      {{0, 3}, {3}, {}, {0, 3}},
      {{2, 0}, {2, 1}, {1, 0}, {2, 0}},
      {{100000}, {100000}, {}, {100000}},
      {{300, 1}, {1, 400}, {300, 400}, {300, 400}},
      {{7, 1, 64, 128}, {1, 3, 1, 128}, {7, 3, 64, 1}, {7, 3, 64, 128}},
  };
  for (const SelectV2Case& c : cases) {
    Tensor condition = Conditions(c.c, 1);
    Tensor t = Values<float>(c.t, 2), e = Values<float>(c.e, 3);
    std::vector<double> expected =
        ReferenceBroadcast({condition, t, e}, c.out,
                           [](std::span<const double> a) { return a[0] != 0 ? a[1] : a[2]; });
    auto out = RunKernel("SelectV2", {{"T", DT_FLOAT}}, {condition, t, e});
    ASSERT_TRUE(out.ok()) << c.c << " " << c.t << " " << c.e << ": " << out.status();
    ASSERT_EQ((*out)[0].shape(), c.out) << c.c << " " << c.t << " " << c.e;
    ASSERT_EQ(ToDoubles((*out)[0]), expected) << c.c << " " << c.t << " " << c.e;
  }
}

TEST(SelectV2Test, ScalarConditionSharesTheChosenInput) {
  Tensor t = Values<int32_t>(TensorShape({3}), 1), e = Values<int32_t>(TensorShape({3}), 2);
  auto out = RunKernel("SelectV2", {{"T", DT_INT32}}, {Tensor::Scalar<bool>(false), t, e});
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE((*out)[0].SharesBufferWith(e));
}

TEST(SelectV2Test, IncompatibleShapes) {
  auto out = RunKernel("SelectV2", {{"T", DT_DOUBLE}},
                       {Tensor(DT_BOOL, TensorShape({2})), Tensor(DT_DOUBLE, TensorShape({3})),
                        Tensor(DT_DOUBLE, TensorShape({1}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_EQ(out.status().message(),
            "SelectV2: condition [2], t [3] and e [1] do not broadcast together (dtype double)");
}

// Strings (a save graph's Select picks a path suffix): the values are
// "t<i>" and "e<i>" for element i of t and e, long enough every third one to
// live on the heap, so a wrong pick or a shallow copy shows.
std::string Label(char which, int64_t i) {
  return which + std::to_string(i) + (i % 3 == 0 ? std::string(40, '.') : "");
}
Tensor Labels(char which, const TensorShape& shape) {
  Tensor t(DT_STRING, shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) t.data<std::string>()[i] = Label(which, i);
  return t;
}
Tensor Indices(const TensorShape& shape, int32_t offset) {
  Tensor t(DT_INT32, shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) t.data<int32_t>()[i] = offset + i;
  return t;
}

TEST(SelectTest, Strings) {
  for (const TensorShape& shape : {TensorShape({4}), TensorShape({3, 2}), TensorShape({})}) {
    for (const TensorShape& c_shape :
         {shape, TensorShape({}), TensorShape({shape.rank() > 1 ? shape.dim_size(0) : 0})}) {
      if (c_shape.rank() == 1 && c_shape.dim_size(0) == 0) continue;
      Tensor c = Conditions(c_shape, 9);
      auto out =
          RunKernel("Select", {{"T", DT_STRING}}, {c, Labels('t', shape), Labels('e', shape)});
      ASSERT_TRUE(out.ok()) << shape << " " << c_shape << ": " << out.status();
      ASSERT_EQ((*out)[0].shape(), shape);
      const int64_t per_condition = c.dims() == 0 ? 1 : shape.num_elements() / c.NumElements();
      for (int64_t i = 0; i < shape.num_elements(); ++i) {
        const bool pick = c.data<bool>()[c.dims() == 0 ? 0 : i / per_condition];
        EXPECT_EQ((*out)[0].data<std::string>()[i], Label(pick ? 't' : 'e', i))
            << shape << " " << c_shape << " at " << i;
      }
    }
  }
  // The save graph's own use: a scalar condition over scalar strings.
  for (bool s3 : {true, false}) {
    auto out = RunKernel("Select", {{"T", DT_STRING}},
                         {Tensor::Scalar<bool>(s3), Tensor::Scalar<std::string>(".part"),
                          Tensor::Scalar<std::string>("_temp/part")});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<std::string>(), s3 ? ".part" : "_temp/part");
  }
  auto bad = RunKernel("Select", {{"T", DT_STRING}},
                       {Tensor(DT_BOOL, TensorShape({2})), Labels('t', TensorShape({3})),
                        Labels('e', TensorShape({3}))});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("dtype string"), std::string::npos) << bad.status();
}

TEST(SelectV2Test, StringsBroadcast) {
  const std::vector<SelectV2Case> cases = {
      {{2, 3}, {2, 3}, {2, 3}, {2, 3}},
      {{}, {2, 3}, {}, {2, 3}},
      {{3}, {2, 3}, {2, 1}, {2, 3}},
      {{2, 1}, {3}, {1, 3}, {2, 3}},
      {{0, 3}, {3}, {}, {0, 3}},
      {{5000}, {5000}, {}, {5000}},
      {{4, 1, 1}, {1, 5, 1}, {1, 1, 6}, {4, 5, 6}},
  };
  constexpr int32_t kE = 1000000;  // e's indices are offset by this
  for (const SelectV2Case& c : cases) {
    Tensor condition = Conditions(c.c, 4);
    // The reference picks indices; the kernel picks the labels they name.
    std::vector<double> expected =
        ReferenceBroadcast({condition, Indices(c.t, 0), Indices(c.e, kE)}, c.out,
                           [](std::span<const double> a) { return a[0] != 0 ? a[1] : a[2]; });
    auto out =
        RunKernel("SelectV2", {{"T", DT_STRING}}, {condition, Labels('t', c.t), Labels('e', c.e)});
    ASSERT_TRUE(out.ok()) << c.c << " " << c.t << " " << c.e << ": " << out.status();
    ASSERT_EQ((*out)[0].shape(), c.out);
    for (int64_t i = 0; i < c.out.num_elements(); ++i) {
      const int64_t index = static_cast<int64_t>(expected[i]);
      ASSERT_EQ((*out)[0].data<std::string>()[i],
                index >= kE ? Label('e', index - kE) : Label('t', index))
          << c.c << " " << c.t << " " << c.e << " at " << i;
    }
  }
}

}  // namespace
}  // namespace weir
