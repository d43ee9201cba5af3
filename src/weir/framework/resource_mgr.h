// ResourceMgr: the per-device home of state that outlives a step (variables,
// queues), grouped into named containers. Sessions that name the same
// container share its resources; resetting a container drops them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <vector>

#include "weir/base/status.h"

namespace weir {

class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  virtual std::string DebugString() const = 0;
};

class ResourceMgr {
 public:
  explicit ResourceMgr(std::string default_container = "localhost")
      : default_container_(std::move(default_container)) {}

  const std::string& default_container() const { return default_container_; }

  // AlreadyExists if (container, T, name) is taken.
  template <typename T>
  Status Create(const std::string& container, const std::string& name,
                std::shared_ptr<T> resource) {
    return DoCreate(container, typeid(T).name(), name, std::move(resource));
  }
  // NotFound naming container and name.
  template <typename T>
  StatusOr<std::shared_ptr<T>> Lookup(const std::string& container,
                                      const std::string& name) const {
    WEIR_ASSIGN_OR_RETURN(std::shared_ptr<ResourceBase> base,
                          DoLookup(container, typeid(T).name(), name));
    return std::static_pointer_cast<T>(base);
  }
  // Returns the existing resource, or the one `create` makes. `create` runs
  // without the manager's lock held (it may use the manager); if another
  // caller inserted the resource meanwhile, that one is returned and the one
  // made here is dropped. A failed `create` inserts nothing.
  template <typename T>
  StatusOr<std::shared_ptr<T>> LookupOrCreate(
      const std::string& container, const std::string& name,
      const std::function<StatusOr<std::shared_ptr<T>>()>& create) {
    if (std::shared_ptr<ResourceBase> found = DoFind(container, typeid(T).name(), name)) {
      return std::static_pointer_cast<T>(found);
    }
    WEIR_ASSIGN_OR_RETURN(std::shared_ptr<T> made, create());
    return std::static_pointer_cast<T>(DoInsertOrGet(container, typeid(T).name(), name, made));
  }
  template <typename T>
  Status Delete(const std::string& container, const std::string& name) {
    return DoDelete(container, typeid(T).name(), name);
  }
  // Drops every resource in `container`; not an error if it does not exist.
  void Cleanup(const std::string& container);
  // Names of the containers that hold at least one resource.
  std::vector<std::string> Containers() const;

 private:
  using Key = std::pair<std::string, std::string>;  // (type name, resource name)
  Status DoCreate(const std::string& container, const char* type, const std::string& name,
                  std::shared_ptr<ResourceBase> resource);
  StatusOr<std::shared_ptr<ResourceBase>> DoLookup(const std::string& container,
                                                   const char* type,
                                                   const std::string& name) const;
  // Null when absent.
  std::shared_ptr<ResourceBase> DoFind(const std::string& container, const char* type,
                                       const std::string& name) const;
  // Inserts `resource` unless the key is taken; returns what the key holds.
  std::shared_ptr<ResourceBase> DoInsertOrGet(const std::string& container, const char* type,
                                              const std::string& name,
                                              std::shared_ptr<ResourceBase> resource);
  Status DoDelete(const std::string& container, const char* type, const std::string& name);

  const std::string default_container_;
  mutable std::mutex mu_;
  std::map<std::string, std::map<Key, std::shared_ptr<ResourceBase>>> containers_;
};

}  // namespace weir
