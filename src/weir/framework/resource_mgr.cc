#include "weir/framework/resource_mgr.h"

namespace weir {

Status ResourceMgr::DoCreate(const std::string& container, const char* type,
                             const std::string& name, std::shared_ptr<ResourceBase> resource) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = containers_[container].emplace(Key(type, name), std::move(resource));
  if (!inserted) {
    return errors::AlreadyExists("resource '", container, "/", name, "' already exists");
  }
  return Status::OK();
}

StatusOr<std::shared_ptr<ResourceBase>> ResourceMgr::DoLookup(const std::string& container,
                                                              const char* type,
                                                              const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto bucket = containers_.find(container);
  if (bucket != containers_.end()) {
    auto it = bucket->second.find(Key(type, name));
    if (it != bucket->second.end()) return it->second;
  }
  return errors::NotFound("resource '", container, "/", name, "' does not exist");
}

std::shared_ptr<ResourceBase> ResourceMgr::DoFind(const std::string& container, const char* type,
                                                  const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto bucket = containers_.find(container);
  if (bucket == containers_.end()) return nullptr;
  auto it = bucket->second.find(Key(type, name));
  return it == bucket->second.end() ? nullptr : it->second;
}

std::shared_ptr<ResourceBase> ResourceMgr::DoInsertOrGet(const std::string& container,
                                                         const char* type, const std::string& name,
                                                         std::shared_ptr<ResourceBase> resource) {
  std::lock_guard<std::mutex> lock(mu_);
  // A loser of the race keeps its `resource` and drops it outside the lock.
  auto [it, inserted] = containers_[container].try_emplace(Key(type, name), resource);
  return it->second;
}

Status ResourceMgr::DoDelete(const std::string& container, const char* type,
                             const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto bucket = containers_.find(container);
  if (bucket == containers_.end() || bucket->second.erase(Key(type, name)) == 0) {
    return errors::NotFound("resource '", container, "/", name, "' does not exist");
  }
  return Status::OK();
}

void ResourceMgr::Cleanup(const std::string& container) {
  std::map<Key, std::shared_ptr<ResourceBase>> dropped;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  auto it = containers_.find(container);
  if (it == containers_.end()) return;
  dropped.swap(it->second);
  containers_.erase(it);
}

std::vector<std::string> ResourceMgr::Containers() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, bucket] : containers_) {
    if (!bucket.empty()) names.push_back(name);
  }
  return names;
}

}  // namespace weir
