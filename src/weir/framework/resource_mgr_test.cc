#include "weir/framework/resource_mgr.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace weir {
namespace {

// Counts live instances so tests can see when the manager lets go.
class Counter : public ResourceBase {
 public:
  explicit Counter(int value = 0) : value(value) { ++live; }
  ~Counter() override { --live; }
  std::string DebugString() const override { return "Counter(" + std::to_string(value) + ")"; }
  int value;
  static inline std::atomic<int> live{0};
};

class Other : public ResourceBase {
 public:
  std::string DebugString() const override { return "Other"; }
};

TEST(ResourceMgrTest, DefaultContainer) {
  EXPECT_EQ(ResourceMgr().default_container(), "localhost");
  EXPECT_EQ(ResourceMgr("mine").default_container(), "mine");
}

TEST(ResourceMgrTest, CreateAndLookup) {
  ResourceMgr mgr;
  auto c = std::make_shared<Counter>(5);
  ASSERT_TRUE(mgr.Create<Counter>("box", "c", c).ok());
  StatusOr<std::shared_ptr<Counter>> found = mgr.Lookup<Counter>("box", "c");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->get(), c.get());  // the same object, not a copy
  EXPECT_EQ((*found)->value, 5);
}

TEST(ResourceMgrTest, CreateTwiceIsAlreadyExists) {
  ResourceMgr mgr;
  ASSERT_TRUE(mgr.Create<Counter>("box", "c", std::make_shared<Counter>(1)).ok());
  Status s = mgr.Create<Counter>("box", "c", std::make_shared<Counter>(2));
  EXPECT_EQ(s.code(), Code::kAlreadyExists);
  EXPECT_NE(s.message().find("box/c"), std::string::npos) << s;
  EXPECT_EQ((*mgr.Lookup<Counter>("box", "c"))->value, 1);  // the first one stays
}

TEST(ResourceMgrTest, LookupMissingIsNotFound) {
  ResourceMgr mgr;
  StatusOr<std::shared_ptr<Counter>> found = mgr.Lookup<Counter>("box", "c");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), Code::kNotFound);
  EXPECT_NE(found.status().message().find("box/c"), std::string::npos) << found.status();
  ASSERT_TRUE(mgr.Create<Counter>("box", "c", std::make_shared<Counter>()).ok());
  EXPECT_EQ(mgr.Lookup<Counter>("other_box", "c").status().code(), Code::kNotFound);
  EXPECT_EQ(mgr.Lookup<Counter>("box", "d").status().code(), Code::kNotFound);
}

TEST(ResourceMgrTest, TypesAreSeparateNamespaces) {
  ResourceMgr mgr;
  ASSERT_TRUE(mgr.Create<Counter>("box", "x", std::make_shared<Counter>(3)).ok());
  // Same container and name, another type: a different resource.
  EXPECT_EQ(mgr.Lookup<Other>("box", "x").status().code(), Code::kNotFound);
  ASSERT_TRUE(mgr.Create<Other>("box", "x", std::make_shared<Other>()).ok());
  EXPECT_EQ((*mgr.Lookup<Other>("box", "x"))->DebugString(), "Other");
  EXPECT_EQ((*mgr.Lookup<Counter>("box", "x"))->value, 3);
  ASSERT_TRUE(mgr.Delete<Other>("box", "x").ok());
  EXPECT_TRUE(mgr.Lookup<Counter>("box", "x").ok());
}

TEST(ResourceMgrTest, LookupOrCreate) {
  ResourceMgr mgr;
  int calls = 0;
  auto make = [&]() -> StatusOr<std::shared_ptr<Counter>> {
    ++calls;
    return std::make_shared<Counter>(calls * 10);
  };
  StatusOr<std::shared_ptr<Counter>> a = mgr.LookupOrCreate<Counter>("box", "c", make);
  ASSERT_TRUE(a.ok());
  StatusOr<std::shared_ptr<Counter>> b = mgr.LookupOrCreate<Counter>("box", "c", make);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ((*b)->value, 10);
  EXPECT_EQ(mgr.Lookup<Counter>("box", "c")->get(), a->get());
}

TEST(ResourceMgrTest, LookupOrCreatePropagatesCreationErrors) {
  ResourceMgr mgr;
  StatusOr<std::shared_ptr<Counter>> r = mgr.LookupOrCreate<Counter>(
      "box", "c", []() -> StatusOr<std::shared_ptr<Counter>> {
        return errors::ResourceExhausted("no room");
      });
  EXPECT_EQ(r.status(), errors::ResourceExhausted("no room"));
  EXPECT_EQ(mgr.Lookup<Counter>("box", "c").status().code(), Code::kNotFound);  // nothing kept
  EXPECT_TRUE(mgr.Containers().empty());
}

// Creators run outside the manager's lock, so racing callers may each make
// one; exactly one is kept and every caller gets it, the others are dropped.
TEST(ResourceMgrTest, ConcurrentLookupOrCreateKeepsExactlyOne) {
  const int live_before = Counter::live.load();
  {
    ResourceMgr mgr;
    std::atomic<int> created{0};
    std::atomic<bool> go{false};
    constexpr int kThreads = 8;
    std::vector<Counter*> seen(kThreads, nullptr);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load()) {
        }
        auto r = mgr.LookupOrCreate<Counter>("box", "shared",
                                             [&]() -> StatusOr<std::shared_ptr<Counter>> {
                                               created.fetch_add(1);
                                               std::this_thread::sleep_for(
                                                   std::chrono::milliseconds(5));
                                               return std::make_shared<Counter>(7);
                                             });
        if (r.ok()) seen[t] = r->get();
      });
    }
    go.store(true);
    for (auto& t : threads) t.join();
    EXPECT_GE(created.load(), 1);
    for (int t = 0; t < kThreads; ++t) {
      ASSERT_NE(seen[t], nullptr) << t;
      EXPECT_EQ(seen[t], seen[0]);
    }
    EXPECT_EQ(mgr.Lookup<Counter>("box", "shared")->get(), seen[0]);
    EXPECT_EQ(Counter::live.load(), live_before + 1);  // the losers are gone
  }
  EXPECT_EQ(Counter::live.load(), live_before);
}

// A creator may use the manager (a queue made of other resources, a
// resource that registers a helper): this deadlocked while the manager
// called creators under its lock.
TEST(ResourceMgrTest, CreatorThatUsesTheManager) {
  ResourceMgr mgr;
  ASSERT_TRUE(mgr.Create<Other>("box", "helper", std::make_shared<Other>()).ok());
  auto made = mgr.LookupOrCreate<Counter>("box", "c", [&]() -> StatusOr<std::shared_ptr<Counter>> {
    WEIR_ASSIGN_OR_RETURN(std::shared_ptr<Other> helper, mgr.Lookup<Other>("box", "helper"));
    WEIR_RETURN_IF_ERROR(mgr.Create<Counter>("box", "sibling", std::make_shared<Counter>(1)));
    auto inner = mgr.LookupOrCreate<Counter>("box", "inner", [] {
      return StatusOr<std::shared_ptr<Counter>>(std::make_shared<Counter>(2));
    });
    WEIR_RETURN_IF_ERROR(inner.status());
    return std::make_shared<Counter>(3);
  });
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ((*made)->value, 3);
  EXPECT_EQ((*mgr.Lookup<Counter>("box", "sibling"))->value, 1);
  EXPECT_EQ((*mgr.Lookup<Counter>("box", "inner"))->value, 2);
}

// A creator that makes the same resource itself (re-entrantly) wins; the
// outer call returns that one rather than a second resource.
TEST(ResourceMgrTest, CreatorThatCreatesTheSameResource) {
  ResourceMgr mgr;
  Counter* inner = nullptr;
  auto made = mgr.LookupOrCreate<Counter>("box", "c", [&]() -> StatusOr<std::shared_ptr<Counter>> {
    auto c = std::make_shared<Counter>(1);
    inner = c.get();
    WEIR_RETURN_IF_ERROR(mgr.Create<Counter>("box", "c", c));
    return std::make_shared<Counter>(2);
  });
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->get(), inner);
  EXPECT_EQ((*made)->value, 1);
}

TEST(ResourceMgrTest, Delete) {
  ResourceMgr mgr;
  int live_before = Counter::live.load();
  ASSERT_TRUE(mgr.Create<Counter>("box", "c", std::make_shared<Counter>()).ok());
  EXPECT_EQ(Counter::live.load(), live_before + 1);
  ASSERT_TRUE(mgr.Delete<Counter>("box", "c").ok());
  EXPECT_EQ(Counter::live.load(), live_before);  // the manager held the last reference
  EXPECT_EQ(mgr.Lookup<Counter>("box", "c").status().code(), Code::kNotFound);
  Status s = mgr.Delete<Counter>("box", "c");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("box/c"), std::string::npos) << s;
  EXPECT_EQ(mgr.Delete<Counter>("never", "c").code(), Code::kNotFound);
}

TEST(ResourceMgrTest, HandedOutReferencesOutliveDelete) {
  ResourceMgr mgr;
  ASSERT_TRUE(mgr.Create<Counter>("box", "c", std::make_shared<Counter>(4)).ok());
  std::shared_ptr<Counter> held = *mgr.Lookup<Counter>("box", "c");
  ASSERT_TRUE(mgr.Delete<Counter>("box", "c").ok());
  EXPECT_EQ(held->value, 4);
}

TEST(ResourceMgrTest, CleanupDropsOneContainer) {
  ResourceMgr mgr;
  int live_before = Counter::live.load();
  ASSERT_TRUE(mgr.Create<Counter>("a", "x", std::make_shared<Counter>()).ok());
  ASSERT_TRUE(mgr.Create<Counter>("a", "y", std::make_shared<Counter>()).ok());
  ASSERT_TRUE(mgr.Create<Counter>("b", "x", std::make_shared<Counter>()).ok());
  EXPECT_EQ(mgr.Containers(), (std::vector<std::string>{"a", "b"}));
  mgr.Cleanup("a");
  EXPECT_EQ(Counter::live.load(), live_before + 1);
  EXPECT_EQ(mgr.Containers(), (std::vector<std::string>{"b"}));
  EXPECT_EQ(mgr.Lookup<Counter>("a", "x").status().code(), Code::kNotFound);
  EXPECT_TRUE(mgr.Lookup<Counter>("b", "x").ok());
  mgr.Cleanup("a");        // already gone: not an error
  mgr.Cleanup("missing");  // never existed: not an error
  // A cleaned container can be filled again.
  EXPECT_TRUE(mgr.Create<Counter>("a", "x", std::make_shared<Counter>()).ok());
}

TEST(ResourceMgrTest, ContainersListsOnlyNonEmpty) {
  ResourceMgr mgr;
  EXPECT_TRUE(mgr.Containers().empty());
  ASSERT_TRUE(mgr.Create<Counter>("a", "x", std::make_shared<Counter>()).ok());
  ASSERT_TRUE(mgr.Delete<Counter>("a", "x").ok());
  EXPECT_TRUE(mgr.Containers().empty());
}

}  // namespace
}  // namespace weir
