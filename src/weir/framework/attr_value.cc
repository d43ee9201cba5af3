#include "weir/framework/attr_value.h"

#include <sstream>

namespace weir {

bool AttrValue::List::operator==(const List& o) const {
  if (s != o.s || i != o.i || f != o.f || b != o.b || type != o.type || shape != o.shape ||
      tensor.size() != o.tensor.size() || func.size() != o.func.size()) {
    return false;
  }
  for (size_t k = 0; k < tensor.size(); ++k) {
    if (!tensor[k].ContentEquals(o.tensor[k])) return false;
  }
  for (size_t k = 0; k < func.size(); ++k) {
    if (!(*func[k] == *o.func[k])) return false;
  }
  return true;
}

AttrValue::AttrValue(NameAttrList func)
    : value_(std::make_shared<const NameAttrList>(std::move(func))) {}

bool AttrValue::operator==(const AttrValue& other) const {
  if (value_.index() != other.value_.index()) return false;
  return std::visit(
      [&](const auto& mine) {
        using V = std::decay_t<decltype(mine)>;
        const V& theirs = std::get<V>(other.value_);
        if constexpr (std::is_same_v<V, Tensor>) {
          return mine.ContentEquals(theirs);
        } else if constexpr (std::is_same_v<V, Func>) {
          return *mine == *theirs;
        } else if constexpr (std::is_same_v<V, std::monostate>) {
          return true;
        } else {
          return mine == theirs;
        }
      },
      value_);
}

std::string AttrValue::KindName() const {
  if (is_s()) return "string";
  if (is_i()) return "int";
  if (is_f()) return "float";
  if (is_b()) return "bool";
  if (is_type()) return "type";
  if (is_shape()) return "shape";
  if (is_tensor()) return "tensor";
  if (is_func()) return "func";
  if (is_placeholder()) return "placeholder";
  if (is_list()) {
    const List& l = list();
    if (!l.s.empty()) return "list(string)";
    if (!l.i.empty()) return "list(int)";
    if (!l.f.empty()) return "list(float)";
    if (!l.b.empty()) return "list(bool)";
    if (!l.type.empty()) return "list(type)";
    if (!l.shape.empty()) return "list(shape)";
    if (!l.tensor.empty()) return "list(tensor)";
    if (!l.func.empty()) return "list(func)";
    return "list";
  }
  return "none";
}

namespace {

// "name[attr=value, ...]", as TensorFlow prints a func attr.
std::string FuncDebugString(const NameAttrList& func) {
  std::string out = func.name;
  if (func.attr.empty()) return out;
  out += "[";
  bool first = true;
  for (const auto& [key, value] : func.attr) {
    out += StrCat(first ? "" : ", ", key, "=", value.DebugString());
    first = false;
  }
  return out + "]";
}

}  // namespace

std::string AttrValue::DebugString() const {
  std::ostringstream os;
  if (is_s()) os << '"' << s() << '"';
  else if (is_i()) os << i();
  else if (is_f()) os << f();
  else if (is_b()) os << (b() ? "true" : "false");
  else if (is_type()) os << type();
  else if (is_shape()) os << shape();
  else if (is_tensor()) os << tensor().DebugString(4);
  else if (is_func()) os << FuncDebugString(func());
  else if (is_placeholder()) os << '$' << placeholder();
  else if (is_list()) {
    const List& l = list();
    os << "[";
    if (!l.s.empty()) os << StrJoin(l.s, ", ");
    if (!l.i.empty()) os << StrJoin(l.i, ", ");
    if (!l.f.empty()) os << StrJoin(l.f, ", ");
    if (!l.b.empty()) os << StrJoin(l.b, ", ");
    if (!l.type.empty()) os << StrJoin(l.type, ", ");
    if (!l.shape.empty()) os << StrJoin(l.shape, ", ");
    for (size_t k = 0; k < l.tensor.size(); ++k) os << (k ? ", " : "") << l.tensor[k].DebugString(4);
    for (size_t k = 0; k < l.func.size(); ++k) os << (k ? ", " : "") << FuncDebugString(*l.func[k]);
    os << "]";
  } else {
    os << "<none>";
  }
  return os.str();
}

namespace {

StatusOr<const AttrValue*> Find(const AttrMap& attrs, const std::string& name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return errors::NotFound("no attr named '", name, "'");
  return &it->second;
}

Status WrongKind(const std::string& name, const AttrValue& value, std::string_view expected) {
  return errors::InvalidArgument("attr '", name, "' has a value of kind ", value.KindName(),
                                 " (", value.DebugString(), "), expected ", expected);
}

template <typename T, typename IsFn, typename GetFn>
Status GetScalar(const AttrMap& attrs, const std::string& name, T* out, IsFn is, GetFn get,
                 std::string_view expected) {
  WEIR_ASSIGN_OR_RETURN(const AttrValue* v, Find(attrs, name));
  if (!(v->*is)()) return WrongKind(name, *v, expected);
  *out = (v->*get)();
  return Status::OK();
}

template <typename T, typename Field>
Status GetList(const AttrMap& attrs, const std::string& name, std::vector<T>* out, Field field,
               std::string_view expected) {
  WEIR_ASSIGN_OR_RETURN(const AttrValue* v, Find(attrs, name));
  if (!v->is_list()) return WrongKind(name, *v, expected);
  const auto& values = v->list().*field;
  const AttrValue::List& l = v->list();
  bool other_kind = (!l.s.empty() || !l.i.empty() || !l.f.empty() || !l.b.empty() ||
                     !l.type.empty() || !l.shape.empty() || !l.tensor.empty() ||
                     !l.func.empty()) &&
                    values.empty();
  if (other_kind) return WrongKind(name, *v, expected);
  out->assign(values.begin(), values.end());
  return Status::OK();
}

}  // namespace

Status GetAttr(const AttrMap& a, const std::string& n, std::string* v) {
  return GetScalar(a, n, v, &AttrValue::is_s, &AttrValue::s, "string");
}
Status GetAttr(const AttrMap& a, const std::string& n, int64_t* v) {
  return GetScalar(a, n, v, &AttrValue::is_i, &AttrValue::i, "int");
}
Status GetAttr(const AttrMap& a, const std::string& n, int32_t* v) {
  int64_t wide;
  WEIR_RETURN_IF_ERROR(GetAttr(a, n, &wide));
  if (wide < INT32_MIN || wide > INT32_MAX) {
    return errors::InvalidArgument("attr '", n, "' value ", wide, " does not fit in int32");
  }
  *v = static_cast<int32_t>(wide);
  return Status::OK();
}
Status GetAttr(const AttrMap& a, const std::string& n, float* v) {
  return GetScalar(a, n, v, &AttrValue::is_f, &AttrValue::f, "float");
}
Status GetAttr(const AttrMap& a, const std::string& n, bool* v) {
  return GetScalar(a, n, v, &AttrValue::is_b, &AttrValue::b, "bool");
}
Status GetAttr(const AttrMap& a, const std::string& n, DType* v) {
  return GetScalar(a, n, v, &AttrValue::is_type, &AttrValue::type, "type");
}
Status GetAttr(const AttrMap& a, const std::string& n, PartialShape* v) {
  return GetScalar(a, n, v, &AttrValue::is_shape, &AttrValue::shape, "shape");
}
Status GetAttr(const AttrMap& a, const std::string& n, Tensor* v) {
  return GetScalar(a, n, v, &AttrValue::is_tensor, &AttrValue::tensor, "tensor");
}
Status GetAttr(const AttrMap& a, const std::string& n, std::vector<int64_t>* v) {
  return GetList(a, n, v, &AttrValue::List::i, "list(int)");
}
Status GetAttr(const AttrMap& a, const std::string& n, std::vector<int32_t>* v) {
  std::vector<int64_t> wide;
  WEIR_RETURN_IF_ERROR(GetAttr(a, n, &wide));
  for (int64_t w : wide) {
    if (w < INT32_MIN || w > INT32_MAX) {
      return errors::InvalidArgument("attr '", n, "' element ", w, " does not fit in int32");
    }
  }
  v->assign(wide.begin(), wide.end());
  return Status::OK();
}
Status GetAttr(const AttrMap& a, const std::string& n, std::vector<float>* v) {
  return GetList(a, n, v, &AttrValue::List::f, "list(float)");
}
Status GetAttr(const AttrMap& a, const std::string& n, std::vector<DType>* v) {
  return GetList(a, n, v, &AttrValue::List::type, "list(type)");
}
Status GetAttr(const AttrMap& a, const std::string& n, std::vector<std::string>* v) {
  return GetList(a, n, v, &AttrValue::List::s, "list(string)");
}
Status GetAttr(const AttrMap& a, const std::string& n, std::vector<PartialShape>* v) {
  return GetList(a, n, v, &AttrValue::List::shape, "list(shape)");
}

Status GetAttr(const AttrMap& a, const std::string& n, NameAttrList* v) {
  WEIR_ASSIGN_OR_RETURN(const AttrValue* value, Find(a, n));
  if (!value->is_func()) return WrongKind(n, *value, "func");
  *v = value->func();
  return Status::OK();
}
Status GetAttr(const AttrMap& a, const std::string& n, std::vector<NameAttrList>* v) {
  std::vector<AttrValue::Func> funcs;
  WEIR_RETURN_IF_ERROR(GetList(a, n, &funcs, &AttrValue::List::func, "list(func)"));
  v->clear();
  for (const AttrValue::Func& f : funcs) v->push_back(*f);
  return Status::OK();
}

}  // namespace weir
