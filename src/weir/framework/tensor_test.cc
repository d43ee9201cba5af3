#include "weir/framework/tensor.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace weir {
namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kTensorAlignment == 0; }

TEST(TensorTest, DefaultIsUninitialized) {
  Tensor t;
  EXPECT_FALSE(t.IsInitialized());
  EXPECT_EQ(t.dtype(), DT_FLOAT);
  EXPECT_EQ(t.dims(), 0);
  EXPECT_EQ(t.raw_data(), nullptr);
  EXPECT_FALSE(t.RefCountIsOne());
  EXPECT_FALSE(t.SharesBufferWith(Tensor()));
  EXPECT_EQ(t.DebugString(), "float [] <uninitialized>");
}

TEST(TensorTest, DataIs64ByteAligned) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_INT8, DT_BOOL, DT_HALF, DT_COMPLEX128, DT_STRING,
                      DT_RESOURCE}) {
    for (int64_t n : {0, 1, 3, 17, 1000}) {
      Tensor t(dtype, TensorShape({n}));
      ASSERT_TRUE(t.IsInitialized());
      EXPECT_TRUE(Aligned(t.raw_data())) << DTypeName(dtype) << " x" << n;
    }
  }
}

TEST(TensorTest, ShapeAndSizes) {
  Tensor t(DT_DOUBLE, TensorShape({2, 3, 4}));
  EXPECT_EQ(t.dtype(), DT_DOUBLE);
  EXPECT_EQ(t.dims(), 3);
  EXPECT_EQ(t.dim_size(1), 3);
  EXPECT_EQ(t.NumElements(), 24);
  EXPECT_EQ(t.TotalBytes(), 24u * 8);
  EXPECT_EQ(t.flat<double>().size(), 24u);
}

TEST(TensorTest, ScalarAndFromVector) {
  Tensor s = Tensor::Scalar<int32_t>(-7);
  EXPECT_EQ(s.dtype(), DT_INT32);
  EXPECT_EQ(s.dims(), 0);
  EXPECT_EQ(s.scalar<int32_t>(), -7);
  Tensor v = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  EXPECT_EQ(v.shape(), TensorShape({2, 3}));
  EXPECT_EQ(v.flat<float>()[5], 6.0f);
  Tensor w = Tensor::FromVector<int64_t>({9, 8});
  EXPECT_EQ(w.shape(), TensorShape({2}));
  EXPECT_EQ(w.data<int64_t>()[1], 8);
}

TEST(TensorTest, CopiesShareTheBufferAndCountReferences) {
  Tensor a = Tensor::FromVector<float>({1, 2, 3});
  EXPECT_TRUE(a.RefCountIsOne());
  {
    Tensor b = a;
    EXPECT_TRUE(b.SharesBufferWith(a));
    EXPECT_EQ(b.raw_data(), a.raw_data());
    EXPECT_FALSE(a.RefCountIsOne());
    EXPECT_FALSE(b.RefCountIsOne());
    b.flat<float>()[1] = 20;
    EXPECT_EQ(a.flat<float>()[1], 20);  // one buffer, seen through both
    Tensor c;
    c = b;
    EXPECT_TRUE(c.SharesBufferWith(a));
  }
  EXPECT_TRUE(a.RefCountIsOne());  // the copies released their references

  Tensor moved = std::move(a);
  EXPECT_TRUE(moved.RefCountIsOne());  // a move adds no reference
  EXPECT_FALSE(a.IsInitialized());     // NOLINT: checking the moved-from state
  EXPECT_EQ(moved.flat<float>()[1], 20);

  Tensor other = Tensor::FromVector<float>({5});
  other = std::move(moved);
  EXPECT_TRUE(other.RefCountIsOne());
  EXPECT_EQ(other.NumElements(), 3);
  const Tensor& alias = other;
  other = alias;  // self-assignment keeps the buffer alive
  EXPECT_TRUE(other.RefCountIsOne());
  EXPECT_EQ(other.flat<float>()[2], 3);
}

TEST(TensorTest, IndependentTensorsDoNotShare) {
  Tensor a(DT_FLOAT, TensorShape({2}));
  Tensor b(DT_FLOAT, TensorShape({2}));
  EXPECT_FALSE(a.SharesBufferWith(b));
}

TEST(TensorTest, SliceSharesBufferAtTheRightOffset) {
  std::vector<int32_t> values(4 * 3);
  for (int i = 0; i < 12; ++i) values[i] = i * 10;
  Tensor t = Tensor::FromVector(values, TensorShape({4, 3}));
  Tensor s = t.Slice(1, 3);
  EXPECT_EQ(s.shape(), TensorShape({2, 3}));
  EXPECT_TRUE(s.SharesBufferWith(t));
  EXPECT_EQ(static_cast<char*>(s.raw_data()) - static_cast<char*>(t.raw_data()),
            3 * static_cast<int>(sizeof(int32_t)));
  std::vector<int32_t> got(s.flat<int32_t>().begin(), s.flat<int32_t>().end());
  EXPECT_EQ(got, (std::vector<int32_t>{30, 40, 50, 60, 70, 80}));
  s.flat<int32_t>()[0] = -1;  // writes land in the parent
  EXPECT_EQ(t.flat<int32_t>()[3], -1);
  EXPECT_FALSE(t.RefCountIsOne());

  // A slice of a slice adds the offsets.
  Tensor ss = s.Slice(1, 2);
  EXPECT_EQ(ss.shape(), TensorShape({1, 3}));
  EXPECT_EQ(ss.flat<int32_t>()[0], 60);

  Tensor empty = t.Slice(4, 4);
  EXPECT_EQ(empty.shape(), TensorShape({0, 3}));
  EXPECT_EQ(empty.NumElements(), 0);
  Tensor all = t.Slice(0, 4);
  EXPECT_EQ(all.raw_data(), t.raw_data());
  EXPECT_TRUE(all.ContentEquals(t));
}

TEST(TensorTest, SliceOutlivesItsParent) {
  Tensor s;
  {
    Tensor t = Tensor::FromVector<double>({1, 2, 3, 4});
    s = t.Slice(2, 4);
  }
  EXPECT_TRUE(s.RefCountIsOne());
  EXPECT_EQ(s.flat<double>()[0], 3);
  EXPECT_EQ(s.flat<double>()[1], 4);
}

TEST(TensorTest, SliceOfStringTensor) {
  Tensor t(DT_STRING, TensorShape({3, 2}));
  for (int i = 0; i < 6; ++i) {
    t.flat<std::string>()[i] = "value number " + std::to_string(i) + " long enough for the heap";
  }
  Tensor s = t.Slice(2, 3);
  EXPECT_EQ(s.shape(), TensorShape({1, 2}));
  EXPECT_EQ(s.flat<std::string>()[0], t.flat<std::string>()[4]);
  EXPECT_EQ(s.flat<std::string>()[1], t.flat<std::string>()[5]);
  EXPECT_EQ(&s.flat<std::string>()[0], &t.flat<std::string>()[4]);
}

TEST(TensorTest, CopyFromReshapesWithoutCopying) {
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6});
  Tensor r;
  ASSERT_TRUE(r.CopyFrom(t, TensorShape({3, 2})));
  EXPECT_EQ(r.shape(), TensorShape({3, 2}));
  EXPECT_EQ(r.dtype(), DT_FLOAT);
  EXPECT_TRUE(r.SharesBufferWith(t));
  EXPECT_EQ(r.flat<float>()[4], 5);

  Tensor keep = Tensor::FromVector<int32_t>({7});
  EXPECT_FALSE(keep.CopyFrom(t, TensorShape({4})));  // 6 elements into 4
  EXPECT_EQ(keep.dtype(), DT_INT32);                 // unchanged on failure
  EXPECT_EQ(keep.scalar<int32_t>(), 7);
  EXPECT_FALSE(keep.SharesBufferWith(t));
  EXPECT_FALSE(keep.CopyFrom(t, TensorShape({7})));
}

TEST(TensorTest, StringTensorsConstructEmptyAndDestroyTheirElements) {
  Tensor t(DT_STRING, TensorShape({2, 2}));
  for (const std::string& s : t.flat<std::string>()) EXPECT_EQ(s, "");
  t.flat<std::string>()[3] = std::string(1000, 'x');  // a heap string the buffer must free
  Tensor copy = t;
  t = Tensor();
  EXPECT_EQ(copy.flat<std::string>()[3].size(), 1000u);
  Tensor scalar = Tensor::Scalar<std::string>("a string that does not fit in SSO storage");
  EXPECT_EQ(scalar.scalar<std::string>(), "a string that does not fit in SSO storage");
  EXPECT_EQ(scalar.TotalBytes(), 0u);
}

TEST(TensorTest, ResourceTensors) {
  Tensor t(DT_RESOURCE, TensorShape({2}));
  EXPECT_EQ(t.flat<ResourceHandle>()[0], ResourceHandle());
  t.flat<ResourceHandle>()[1] =
      ResourceHandle("/device:CPU:0", "localhost", "a_variable_with_a_long_name", "Var");
  Tensor copy = t;
  t = Tensor();
  EXPECT_EQ(copy.flat<ResourceHandle>()[1].name(), "a_variable_with_a_long_name");
  EXPECT_EQ(copy.DebugString(),
            "resource [2] {ResourceHandle(, /, ), "
            "ResourceHandle(/device:CPU:0, localhost/a_variable_with_a_long_name, Var)}");
}

TEST(TensorTest, DebugString) {
  EXPECT_EQ(Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})).DebugString(),
            "float [2,2] {1, 2, 3, 4}");
  EXPECT_EQ(Tensor::FromVector<int32_t>({1, 2, 3, 4, 5}).DebugString(3),
            "int32 [5] {1, 2, 3, ...}");
  EXPECT_EQ(Tensor::FromVector<int8_t>({-1, 65}).DebugString(), "int8 [2] {-1, 65}");
  EXPECT_EQ(Tensor::FromVector<uint8_t>({255, 0}).DebugString(), "uint8 [2] {255, 0}");
  EXPECT_EQ(Tensor::FromVector<bool>({true, false}).DebugString(), "bool [2] {1, 0}");
  EXPECT_EQ(Tensor::Scalar<std::string>("hi").DebugString(), "string [] {\"hi\"}");
  EXPECT_EQ(Tensor::Scalar<Eigen::half>(Eigen::half(1.5f)).DebugString(), "half [] {1.5}");
  EXPECT_EQ(Tensor(DT_FLOAT, TensorShape({0, 3})).DebugString(), "float [0,3] {}");
}

TEST(TensorTest, ContentEquals) {
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  Tensor b = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  EXPECT_FALSE(a.SharesBufferWith(b));
  EXPECT_TRUE(a.ContentEquals(b));
  EXPECT_TRUE(a.ContentEquals(a));

  EXPECT_FALSE(a.ContentEquals(Tensor::FromVector<float>({1, 2, 3, 5}, TensorShape({2, 2}))));
  EXPECT_FALSE(a.ContentEquals(Tensor::FromVector<float>({1, 2, 3, 4})));  // shape
  EXPECT_FALSE(a.ContentEquals(Tensor::FromVector<int32_t>({1, 2, 3, 4}, TensorShape({2, 2}))));
  EXPECT_FALSE(a.ContentEquals(Tensor()));
  EXPECT_TRUE(Tensor().ContentEquals(Tensor()));

  // Bit-identical: NaN equals itself, -0 differs from +0.
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(Tensor::Scalar(nan).ContentEquals(Tensor::Scalar(nan)));
  EXPECT_FALSE(Tensor::Scalar(0.0f).ContentEquals(Tensor::Scalar(-0.0f)));

  // A slice compares by its own rows, not the parent's start.
  Tensor rows = Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  EXPECT_TRUE(rows.Slice(1, 2).ContentEquals(
      Tensor::FromVector<int64_t>({3, 4}, TensorShape({1, 2}))));

  // Strings compare by value, not by the pointers inside std::string.
  Tensor s1 = Tensor::FromVector<std::string>({std::string(100, 'a'), "b"});
  Tensor s2 = Tensor::FromVector<std::string>({std::string(100, 'a'), "b"});
  Tensor s3 = Tensor::FromVector<std::string>({std::string(100, 'a'), "c"});
  EXPECT_TRUE(s1.ContentEquals(s2));
  EXPECT_FALSE(s1.ContentEquals(s3));
}

TEST(TensorTest, DispatchNumericDType) {
  size_t size = 0;
  EXPECT_TRUE(DispatchNumericDType(DT_COMPLEX64, [&]<typename T>() { size = sizeof(T); }));
  EXPECT_EQ(size, 8u);
  EXPECT_TRUE(DispatchNumericDType(DT_UINT16, [&]<typename T>() { size = sizeof(T); }));
  EXPECT_EQ(size, 2u);
  EXPECT_FALSE(DispatchNumericDType(DT_STRING, [&]<typename T>() { size = 0; }));
  EXPECT_FALSE(DispatchNumericDType(DT_HALF, [&]<typename T>() { size = 0; }));
  EXPECT_EQ(size, 2u);
}

TEST(TensorTest, BorrowedMemoryIsReleasedOnceAndNeverReusedInPlace) {
  static int released = 0;
  released = 0;
  float memory[4] = {1, 2, 3, 4};
  {
    Tensor t = Tensor::Borrow(DT_FLOAT, TensorShape({2, 2}), memory,
                              [](void* arg) { ++*static_cast<int*>(arg); }, &released);
    EXPECT_TRUE(t.IsBorrowed());
    EXPECT_EQ(t.raw_data(), memory);
    EXPECT_EQ(t.flat<float>()[3], 4.f);
    // The only reference, yet not reusable: the memory is the lender's.
    EXPECT_FALSE(t.RefCountIsOne());
    Tensor copy = t;
    Tensor row = t.Slice(1, 2);
    EXPECT_TRUE(row.IsBorrowed());
    StatusOr<Tensor> owned = t.DeepCopy(DefaultCpuAllocator());
    ASSERT_TRUE(owned.ok());
    EXPECT_FALSE(owned->IsBorrowed());
    EXPECT_NE(owned->raw_data(), static_cast<void*>(memory));
    EXPECT_TRUE(owned->ContentEquals(t));
    memory[0] = 9;  // the copy is independent of the lender's memory
    EXPECT_EQ(owned->flat<float>()[0], 1.f);
    EXPECT_EQ(released, 0);
  }
  EXPECT_EQ(released, 1);
}

TEST(TensorTest, DeepCopyOfStrings) {
  Tensor t = Tensor::FromVector<std::string>({"a", "bc"});
  StatusOr<Tensor> copy = t.DeepCopy(DefaultCpuAllocator());
  ASSERT_TRUE(copy.ok());
  EXPECT_FALSE(copy->SharesBufferWith(t));
  EXPECT_TRUE(copy->ContentEquals(t));
}

}  // namespace
}  // namespace weir

namespace weir {
namespace {

class Counter : public VariantValue {
 public:
  explicit Counter(int n) : n(n) {}
  int n;
  std::string_view TypeName() const override { return "Counter"; }
  std::string DebugString() const override { return "Counter(" + std::to_string(n) + ")"; }
  std::unique_ptr<VariantValue> Clone() const override { return std::make_unique<Counter>(n); }
};

TEST(VariantTensorTest, HoldsSharedValuesCopiedOnWrite) {
  EXPECT_EQ(DTypeName(DT_VARIANT), "variant");
  EXPECT_EQ(DTypeSize(DT_VARIANT), 0u);
  EXPECT_TRUE(IsNonPodDType(DT_VARIANT));
  Tensor t(DT_VARIANT, TensorShape({2}));
  EXPECT_TRUE(t.flat<Variant>()[0].empty());
  t.flat<Variant>()[0] = Variant::Make<Counter>(1);
  EXPECT_NE(t.DebugString().find("Counter(1)"), std::string::npos) << t.DebugString();

  StatusOr<Tensor> copy = t.DeepCopy(DefaultCpuAllocator());
  ASSERT_TRUE(copy.ok());
  EXPECT_TRUE(copy->ContentEquals(t));  // the same value objects
  // Two holders: a change goes to a clone, the other holder keeps 1.
  Variant& mine = copy->flat<Variant>()[0];
  EXPECT_FALSE(mine.IsUnique());
  mine.GetMutable<Counter>()->n = 5;
  EXPECT_EQ(t.flat<Variant>()[0].get<Counter>()->n, 1);
  EXPECT_EQ(mine.get<Counter>()->n, 5);
  EXPECT_TRUE(mine.IsUnique());
  EXPECT_FALSE(copy->ContentEquals(t));
  // A value of another kind is not a Counter.
  EXPECT_EQ(Variant().get<Counter>(), nullptr);
  EXPECT_EQ(mine.GetMutable<VariantValue>() != nullptr, true);
  // The default value arithmetic says what is missing.
  StatusOr<Variant> zeros = mine.value()->ZerosLike();
  EXPECT_EQ(zeros.status().code(), Code::kUnimplemented);
  EXPECT_NE(zeros.status().message().find("Counter"), std::string::npos);
}

}  // namespace
}  // namespace weir
