// Compile-time lists of element types, so a kernel template is registered
// for each of its types by one loop instead of one line per type.
//
//   ForEachType<float, double>([&]<typename T>() { Register<MyOp<T>>(...); });
#pragma once

namespace weir {

template <typename... Types, typename Fn>
void ForEachType(Fn&& fn) {
  (fn.template operator()<Types>(), ...);
}

}  // namespace weir
