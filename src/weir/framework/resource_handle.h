// ResourceHandle: the element of a DT_RESOURCE tensor. A typed capability that
// names a resource (variable, queue) living in a device's ResourceMgr.
#pragma once

#include <string>

namespace weir {

class ResourceHandle {
 public:
  ResourceHandle() = default;
  ResourceHandle(std::string device, std::string container, std::string name,
                 std::string type_name)
      : device_(std::move(device)),
        container_(std::move(container)),
        name_(std::move(name)),
        type_name_(std::move(type_name)) {}

  const std::string& device() const { return device_; }
  const std::string& container() const { return container_; }
  const std::string& name() const { return name_; }
  // The C++ type of the resource, checked when the handle is looked up.
  const std::string& type_name() const { return type_name_; }

  std::string DebugString() const {
    return "ResourceHandle(" + device_ + ", " + container_ + "/" + name_ + ", " + type_name_ + ")";
  }
  bool operator==(const ResourceHandle& o) const {
    return device_ == o.device_ && container_ == o.container_ && name_ == o.name_ &&
           type_name_ == o.type_name_;
  }

 private:
  std::string device_;
  std::string container_;
  std::string name_;
  std::string type_name_;
};

}  // namespace weir
