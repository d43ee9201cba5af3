// ResourceCountUpTo through a session: the value before each increment,
// then OutOfRange at the limit with the variable left there (as
// TensorFlow's CountUpTo); misuse is a clear error.
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

const PartialShape kScalar(std::vector<int64_t>{});

std::unique_ptr<Session> NewSession(const Scope& root) {
  EXPECT_TRUE(root.ok()) << root.status();
  auto session = Session::New(SessionOptions());
  EXPECT_TRUE(session.ok());
  EXPECT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  return std::move(session).value();
}

template <typename T>
void CountsUpToTheLimit(DType dtype) {
  Scope root = Scope::NewRootScope();
  Output var = ops::VarHandleOp(root.WithOpName("epochs"), dtype, kScalar);
  ops::AssignVariableOp(root.WithOpName("init"), var, ops::Const(root, T{0}));
  ops::ResourceCountUpTo(root.WithOpName("count"), var, 3, dtype);
  ops::ReadVariableOp(root.WithOpName("read"), var, dtype);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  for (T expected = 0; expected < 3; ++expected) {
    ASSERT_TRUE(session->Run({}, {"count"}, {}, &out).ok());
    ASSERT_EQ(out[0].dtype(), dtype);
    EXPECT_EQ(out[0].scalar<T>(), expected);
  }
  for (int again = 0; again < 2; ++again) {
    Status s = session->Run({}, {"count"}, {}, &out);
    EXPECT_EQ(s.code(), Code::kOutOfRange) << s;
    EXPECT_NE(s.message().find("Reached limit of 3"), std::string::npos) << s;
  }
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<T>(), 3);
  // Rerunning the initializer restarts the count.
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"count"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<T>(), 0);
}

TEST(CountUpToTest, Int64CountsUpToTheLimit) { CountsUpToTheLimit<int64_t>(DT_INT64); }
TEST(CountUpToTest, Int32CountsUpToTheLimit) { CountsUpToTheLimit<int32_t>(DT_INT32); }

TEST(CountUpToTest, AReaderKeepsTheValueItRead) {
  Scope root = Scope::NewRootScope();
  Output var = ops::VarHandleOp(root.WithOpName("v"), DT_INT64, kScalar);
  ops::AssignVariableOp(root.WithOpName("init"), var, ops::Const(root, int64_t{5}));
  ops::ReadVariableOp(root.WithOpName("read"), var, DT_INT64);
  ops::ResourceCountUpTo(root.WithOpName("count"), var, 10, DT_INT64);
  auto session = NewSession(root);
  std::vector<Tensor> read, counted;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &read).ok());
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &read).ok());
  ASSERT_TRUE(session->Run({}, {"count"}, {}, &counted).ok());
  EXPECT_EQ(read[0].scalar<int64_t>(), 5);  // copy-on-write: the earlier read is unchanged
  EXPECT_EQ(counted[0].scalar<int64_t>(), 5);
}

TEST(CountUpToTest, MisuseIsAClearError) {
  Scope root = Scope::NewRootScope();
  Output uninitialized = ops::VarHandleOp(root.WithOpName("fresh"), DT_INT64, kScalar);
  ops::ResourceCountUpTo(root.WithOpName("count_fresh"), uninitialized, 2, DT_INT64);
  Output vector = ops::VarHandleOp(root.WithOpName("vector"), DT_INT64, PartialShape({2}));
  ops::AssignVariableOp(root.WithOpName("init_vector"), vector,
                        ops::Const(root, {int64_t{0}, int64_t{0}}));
  ops::ResourceCountUpTo(root.WithOpName("count_vector"), vector, 2, DT_INT64);
  ops::ResourceCountUpTo(root.WithOpName("count_as_int32"), vector, 2, DT_INT32);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  Status s = session->Run({}, {"count_fresh"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("'fresh'"), std::string::npos) << s;
  ASSERT_TRUE(session->Run({}, {}, {"init_vector"}, &out).ok());
  s = session->Run({}, {"count_vector"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("scalar"), std::string::npos) << s;
  s = session->Run({}, {"count_as_int32"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("int32"), std::string::npos) << s;
}

}  // namespace
}  // namespace weir
