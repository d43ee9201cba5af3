#include "weir/base/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

namespace weir {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(s, Status::OK());
}

TEST(StatusTest, CodesKeepTensorFlowNumbers) {
  EXPECT_EQ(static_cast<int>(Code::kCancelled), 1);
  EXPECT_EQ(static_cast<int>(Code::kInvalidArgument), 3);
  EXPECT_EQ(static_cast<int>(Code::kNotFound), 5);
  EXPECT_EQ(static_cast<int>(Code::kResourceExhausted), 8);
  EXPECT_EQ(static_cast<int>(Code::kOutOfRange), 11);
  EXPECT_EQ(static_cast<int>(Code::kInternal), 13);
  EXPECT_EQ(static_cast<int>(Code::kDataLoss), 15);
}

TEST(StatusTest, EveryConstructorSetsItsCodeAndName) {
  struct Case {
    Status status;
    Code code;
    const char* name;
    bool (*is)(const Status&);
  };
  const Case cases[] = {
      {errors::Cancelled("m"), Code::kCancelled, "Cancelled", errors::IsCancelled},
      {errors::Unknown("m"), Code::kUnknown, "Unknown", errors::IsUnknown},
      {errors::InvalidArgument("m"), Code::kInvalidArgument, "InvalidArgument",
       errors::IsInvalidArgument},
      {errors::DeadlineExceeded("m"), Code::kDeadlineExceeded, "DeadlineExceeded",
       errors::IsDeadlineExceeded},
      {errors::NotFound("m"), Code::kNotFound, "NotFound", errors::IsNotFound},
      {errors::AlreadyExists("m"), Code::kAlreadyExists, "AlreadyExists", errors::IsAlreadyExists},
      {errors::PermissionDenied("m"), Code::kPermissionDenied, "PermissionDenied",
       errors::IsPermissionDenied},
      {errors::ResourceExhausted("m"), Code::kResourceExhausted, "ResourceExhausted",
       errors::IsResourceExhausted},
      {errors::FailedPrecondition("m"), Code::kFailedPrecondition, "FailedPrecondition",
       errors::IsFailedPrecondition},
      {errors::Aborted("m"), Code::kAborted, "Aborted", errors::IsAborted},
      {errors::OutOfRange("m"), Code::kOutOfRange, "OutOfRange", errors::IsOutOfRange},
      {errors::Unimplemented("m"), Code::kUnimplemented, "Unimplemented", errors::IsUnimplemented},
      {errors::Internal("m"), Code::kInternal, "Internal", errors::IsInternal},
      {errors::Unavailable("m"), Code::kUnavailable, "Unavailable", errors::IsUnavailable},
      {errors::DataLoss("m"), Code::kDataLoss, "DataLoss", errors::IsDataLoss},
      {errors::Unauthenticated("m"), Code::kUnauthenticated, "Unauthenticated",
       errors::IsUnauthenticated},
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(c.status.ok()) << c.name;
    EXPECT_EQ(c.status.code(), c.code) << c.name;
    EXPECT_EQ(CodeName(c.code), c.name);
    EXPECT_EQ(c.status.ToString(), std::string(c.name) + ": m");
    EXPECT_TRUE(c.is(c.status)) << c.name;
    EXPECT_FALSE(c.is(Status::OK())) << c.name;
  }
  EXPECT_FALSE(errors::IsNotFound(errors::InvalidArgument("m")));
  EXPECT_EQ(CodeName(Code::kOk), "OK");
  EXPECT_EQ(CodeName(static_cast<Code>(99)), "UnknownCode");
  // TensorFlow's numbering (error_codes.proto), which crosses the wire as is.
  EXPECT_EQ(static_cast<int>(Code::kDataLoss), 15);
  EXPECT_EQ(static_cast<int>(Code::kUnauthenticated), 16);
  EXPECT_EQ(kLastCode, Code::kUnauthenticated);
  EXPECT_EQ(CodeName(static_cast<Code>(17)), "UnknownCode");
}

TEST(StatusTest, ConstructorConcatenatesMixedArguments) {
  Status s = errors::InvalidArgument("node '", std::string("x"), "' has ", 3, " inputs, ", 2.5);
  EXPECT_EQ(s.message(), "node 'x' has 3 inputs, 2.5");
  EXPECT_EQ(s.ToString(), "InvalidArgument: node 'x' has 3 inputs, 2.5");
}

TEST(StatusTest, OkCodeWithMessageIsOk) {
  Status s(Code::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, WithContextPrependsToErrorsAndLeavesOkAlone) {
  Status s = errors::NotFound("no file");
  Status with = s.WithContext("loading model");
  EXPECT_EQ(with.code(), Code::kNotFound);
  EXPECT_EQ(with.message(), "loading model: no file");
  EXPECT_EQ(s.message(), "no file");  // the original is unchanged
  EXPECT_TRUE(Status::OK().WithContext("ctx").ok());
  EXPECT_EQ(s.WithContext("a").WithContext("b").message(), "b: a: no file");
}

TEST(StatusTest, UpdateKeepsFirstError) {
  Status s;
  s.Update(Status::OK());
  EXPECT_TRUE(s.ok());
  s.Update(errors::Aborted("first"));
  s.Update(errors::Internal("second"));
  s.Update(Status::OK());
  EXPECT_EQ(s.code(), Code::kAborted);
  EXPECT_EQ(s.message(), "first");
}

TEST(StatusTest, EqualityComparesCodeAndMessage) {
  EXPECT_EQ(errors::Internal("a"), errors::Internal("a"));
  EXPECT_FALSE(errors::Internal("a") == errors::Internal("b"));
  EXPECT_FALSE(errors::Internal("a") == errors::Unknown("a"));
  EXPECT_FALSE(errors::Internal("") == Status::OK());
}

TEST(StatusTest, CopiesAreIndependentValues) {
  Status a = errors::Internal("a");
  Status b = a;
  b = b.WithContext("ctx");
  EXPECT_EQ(a.message(), "a");
  EXPECT_EQ(b.message(), "ctx: a");
}

TEST(StatusTest, StreamsAsToString) {
  std::ostringstream os;
  os << errors::OutOfRange("end") << "|" << Status::OK();
  EXPECT_EQ(os.str(), "OutOfRange: end|OK");
}

TEST(StatusOrTest, HoldsValue) {
  StatusOr<std::string> v = std::string("hello");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.status().ok());
  EXPECT_EQ(v.value(), "hello");
  EXPECT_EQ(*v, "hello");
  EXPECT_EQ(v->size(), 5u);
  v.value() += "!";
  EXPECT_EQ(*v, "hello!");
}

TEST(StatusOrTest, HoldsError) {
  StatusOr<int> v = errors::NotFound("missing");
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status(), errors::NotFound("missing"));
}

TEST(StatusOrTest, MovesOutMoveOnlyValues) {
  StatusOr<std::unique_ptr<int>> v = std::make_unique<int>(7);
  ASSERT_TRUE(v.ok());
  std::unique_ptr<int> p = std::move(v).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 7);
}

// Reading the value of an error is a programmer error: every accessor aborts
// with the status rather than reading an empty optional.
TEST(StatusOrDeathTest, ValueOfErrorChecksWithTheStatus) {
  StatusOr<std::string> v = errors::NotFound("no such node 'x'");
  const StatusOr<std::string>& cv = v;
  const char* kMessage = "StatusOr::value\\(\\) on an error: NotFound: no such node 'x'";
  EXPECT_DEATH((void)v.value(), kMessage);
  EXPECT_DEATH((void)cv.value(), kMessage);
  EXPECT_DEATH((void)std::move(v).value(), kMessage);
  EXPECT_DEATH((void)*v, kMessage);
  EXPECT_DEATH((void)*cv, kMessage);
  EXPECT_DEATH((void)*std::move(v), kMessage);
  EXPECT_DEATH((void)v->size(), kMessage);
  EXPECT_DEATH((void)cv->size(), kMessage);
}

#ifdef NDEBUG
// In debug builds the assert fires instead; release builds turn the misuse
// into an Internal error rather than a StatusOr that claims to hold a value.
TEST(StatusOrTest, OkStatusBecomesInternalError) {
  StatusOr<int> v = Status::OK();
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kInternal);
}
#endif

// Helpers for the propagation macros.
Status FailIf(bool fail, int* calls) {
  ++*calls;
  return fail ? errors::Internal("failed at call ", *calls) : Status::OK();
}

Status TwoSteps(bool fail_first, bool fail_second, int* calls, bool* reached_end) {
  WEIR_RETURN_IF_ERROR(FailIf(fail_first, calls));
  WEIR_RETURN_IF_ERROR(FailIf(fail_second, calls));
  *reached_end = true;
  return Status::OK();
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtFirstError) {
  int calls = 0;
  bool reached_end = false;
  EXPECT_TRUE(TwoSteps(false, false, &calls, &reached_end).ok());
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(reached_end);

  calls = 0;
  reached_end = false;
  Status s = TwoSteps(true, false, &calls, &reached_end);
  EXPECT_EQ(s, errors::Internal("failed at call 1"));
  EXPECT_EQ(calls, 1);  // the second expression is never evaluated
  EXPECT_FALSE(reached_end);

  calls = 0;
  s = TwoSteps(false, true, &calls, &reached_end);
  EXPECT_EQ(s, errors::Internal("failed at call 2"));
  EXPECT_FALSE(reached_end);
}

StatusOr<int> Half(int x, int* calls) {
  ++*calls;
  if (x % 2 != 0) return errors::InvalidArgument(x, " is odd");
  return x / 2;
}

StatusOr<int> Quarter(int x, int* calls) {
  WEIR_ASSIGN_OR_RETURN(int half, Half(x, calls));
  WEIR_ASSIGN_OR_RETURN(int quarter, Half(half, calls));
  return quarter;
}

Status QuarterInto(int x, int* out, int* calls) {
  WEIR_ASSIGN_OR_RETURN(*out, Quarter(x, calls));
  return Status::OK();
}

TEST(StatusMacrosTest, AssignOrReturnAssignsOrPropagates) {
  int calls = 0;
  StatusOr<int> q = Quarter(12, &calls);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, 3);
  EXPECT_EQ(calls, 2);  // each expression evaluated exactly once

  calls = 0;
  q = Quarter(6, &calls);  // 6 -> 3, then 3 is odd
  EXPECT_EQ(q.status(), errors::InvalidArgument("3 is odd"));
  EXPECT_EQ(calls, 2);

  calls = 0;
  q = Quarter(5, &calls);
  EXPECT_EQ(q.status(), errors::InvalidArgument("5 is odd"));
  EXPECT_EQ(calls, 1);

  int out = -1;
  EXPECT_TRUE(QuarterInto(8, &out, &calls).ok());
  EXPECT_EQ(out, 2);
  out = -1;
  EXPECT_EQ(QuarterInto(7, &out, &calls).code(), Code::kInvalidArgument);
  EXPECT_EQ(out, -1);  // untouched on error
}

StatusOr<std::unique_ptr<int>> MakeBox(int v) { return std::make_unique<int>(v); }

Status UnboxMoveOnly(int* out) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<int> box, MakeBox(41));
  *out = *box + 1;
  return Status::OK();
}

TEST(StatusMacrosTest, AssignOrReturnMovesMoveOnlyValues) {
  int out = 0;
  EXPECT_TRUE(UnboxMoveOnly(&out).ok());
  EXPECT_EQ(out, 42);
}

}  // namespace
}  // namespace weir
