#include "weir/framework/op_def.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "weir/base/logging.h"
#include "weir/framework/shape_inference.h"

namespace weir {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "name: rest" at the first colon.
Status SplitNameColon(std::string_view spec, std::string* name, std::string_view* rest) {
  size_t colon = spec.find(':');
  if (colon == std::string_view::npos) {
    return errors::InvalidArgument("spec '", spec, "' has no ':'");
  }
  *name = std::string(Trim(spec.substr(0, colon)));
  *rest = Trim(spec.substr(colon + 1));
  if (name->empty()) return errors::InvalidArgument("spec '", spec, "' has no name");
  return Status::OK();
}

// Named groups of dtypes, as TensorFlow spells them.
bool ExpandTypeGroup(std::string_view group, std::vector<DType>* types) {
  if (group == "numbertype") {
    *types = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_COMPLEX64,
              DT_INT64, DT_BFLOAT16, DT_UINT16, DT_COMPLEX128, DT_HALF, DT_UINT32, DT_UINT64};
  } else if (group == "realnumbertype") {
    *types = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_INT64,
              DT_BFLOAT16, DT_UINT16, DT_HALF, DT_UINT32, DT_UINT64};
  } else if (group == "floattype") {
    *types = {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE};
  } else if (group == "quantizedtype") {
    *types = {};
  } else {
    return false;
  }
  return true;
}

Status ParseDefault(const std::string& type, std::string_view text, AttrValue* value) {
  auto parse_scalar = [](const std::string& t, std::string_view v, AttrValue* out) -> Status {
    if (t == "int") {
      int64_t i;
      if (!ParseInt64(v, &i)) return errors::InvalidArgument("bad int default '", v, "'");
      *out = AttrValue(i);
    } else if (t == "float") {
      // from_chars, not stof: stof throws on junk and accepts "1.5x".
      float f;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), f);
      if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
        return errors::InvalidArgument("bad float default '", v, "'");
      }
      *out = AttrValue(f);
    } else if (t == "bool") {
      if (v != "true" && v != "false") return errors::InvalidArgument("bad bool '", v, "'");
      *out = AttrValue(v == "true");
    } else if (t == "string") {
      if (v.size() < 2 || (v.front() != '\'' && v.front() != '"') || v.back() != v.front()) {
        return errors::InvalidArgument("string default must be quoted: ", v);
      }
      *out = AttrValue(std::string(v.substr(1, v.size() - 2)));
    } else if (t == "type") {
      DType d;
      if (v.substr(0, 3) == "DT_") {
        std::string lower;
        for (char c : v.substr(3)) lower += static_cast<char>(std::tolower(c));
        if (!DTypeFromName(lower, &d)) return errors::InvalidArgument("bad type '", v, "'");
      } else if (!DTypeFromName(v, &d)) {
        return errors::InvalidArgument("bad type '", v, "'");
      }
      *out = AttrValue(d);
    } else {
      return errors::InvalidArgument("defaults of type ", t,
                                     " must be given with AttrDefault()");
    }
    return Status::OK();
  };
  if (StartsWith(type, "list(")) {
    std::string inner = type.substr(5, type.size() - 6);
    if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
      return errors::InvalidArgument("list default must be [..]: ", text);
    }
    AttrValue::List list;
    std::string_view body = Trim(text.substr(1, text.size() - 2));
    if (!body.empty()) {
      for (const std::string& part : StrSplit(body, ',')) {
        AttrValue element;
        WEIR_RETURN_IF_ERROR(parse_scalar(inner, Trim(part), &element));
        if (inner == "int") list.i.push_back(element.i());
        else if (inner == "float") list.f.push_back(element.f());
        else if (inner == "bool") list.b.push_back(element.b());
        else if (inner == "string") list.s.push_back(element.s());
        else if (inner == "type") list.type.push_back(element.type());
      }
    }
    *value = AttrValue(std::move(list));
    return Status::OK();
  }
  return parse_scalar(type, text, value);
}

bool IsKnownAttrType(std::string_view type) {
  static const char* kScalars[] = {"int", "float", "bool", "string", "type",
                                   "shape", "tensor", "func"};
  std::string_view inner = type;
  if (StartsWith(type, "list(") && EndsWith(type, ")")) inner = type.substr(5, type.size() - 6);
  return std::any_of(std::begin(kScalars), std::end(kScalars),
                     [&](const char* s) { return inner == s; });
}

Status ParseAttrSpec(std::string_view spec, AttrDef* attr) {
  std::string_view rest;
  WEIR_RETURN_IF_ERROR(SplitNameColon(spec, &attr->name, &rest));
  // Split off "= default": the first '=' that is not part of ">= minimum"
  // (TensorFlow's order is "int >= 1 = 2").
  std::string_view default_text;
  size_t eq = rest.find('=');
  while (eq != std::string_view::npos && eq > 0 && rest[eq - 1] == '>') {
    eq = rest.find('=', eq + 1);
  }
  if (eq != std::string_view::npos) {
    default_text = Trim(rest.substr(eq + 1));
    rest = Trim(rest.substr(0, eq));
  }
  // Split off ">= minimum".
  size_t ge = rest.find(">=");
  if (ge != std::string_view::npos) {
    if (!ParseInt64(Trim(rest.substr(ge + 2)), &attr->minimum)) {
      return errors::InvalidArgument("bad minimum in '", spec, "'");
    }
    attr->has_minimum = true;
    rest = Trim(rest.substr(0, ge));
  }
  if (!rest.empty() && rest.front() == '{') {
    // An allowed set: {float, double} (types) or {'SAME', 'VALID'} (strings).
    if (rest.back() != '}') return errors::InvalidArgument("unclosed '{' in '", spec, "'");
    std::string_view body = rest.substr(1, rest.size() - 2);
    for (const std::string& raw : StrSplit(body, ',')) {
      std::string_view item = Trim(raw);
      if (!item.empty() && (item.front() == '\'' || item.front() == '"')) {
        attr->type = "string";
        attr->allowed_strings.emplace_back(item.substr(1, item.size() - 2));
      } else {
        attr->type = "type";
        std::vector<DType> group;
        DType d;
        if (ExpandTypeGroup(item, &group)) {
          attr->allowed_types.insert(attr->allowed_types.end(), group.begin(), group.end());
        } else if (DTypeFromName(item, &d)) {
          attr->allowed_types.push_back(d);
        } else {
          return errors::InvalidArgument("unknown type '", item, "' in '", spec, "'");
        }
      }
    }
  } else if (StartsWith(rest, "list(") && rest.size() > 6 && rest[5] == '{') {
    // list({float, int32}): a type list with an allowed set.
    attr->type = "list(type)";
    std::string_view body = rest.substr(6, rest.size() - 8);
    for (const std::string& raw : StrSplit(body, ',')) {
      DType d;
      std::vector<DType> group;
      std::string_view item = Trim(raw);
      if (ExpandTypeGroup(item, &group)) {
        attr->allowed_types.insert(attr->allowed_types.end(), group.begin(), group.end());
      } else if (DTypeFromName(item, &d)) {
        attr->allowed_types.push_back(d);
      } else {
        return errors::InvalidArgument("unknown type '", item, "' in '", spec, "'");
      }
    }
  } else {
    std::vector<DType> group;
    if (ExpandTypeGroup(rest, &group)) {
      attr->type = "type";
      attr->allowed_types = group;
    } else {
      attr->type = std::string(rest);
    }
  }
  if (!IsKnownAttrType(attr->type)) {
    return errors::InvalidArgument("unknown attr type '", attr->type, "' in '", spec, "'");
  }
  if (!default_text.empty()) {
    WEIR_RETURN_IF_ERROR(ParseDefault(attr->type, default_text, &attr->default_value));
    attr->has_default = true;
  }
  return Status::OK();
}

Status ParseArgSpec(std::string_view spec, const OpDef& op, ArgDef* arg) {
  std::string_view rest;
  WEIR_RETURN_IF_ERROR(SplitNameColon(spec, &arg->name, &rest));
  size_t star = rest.find('*');
  if (star != std::string_view::npos) {
    arg->number_attr = std::string(Trim(rest.substr(0, star)));
    rest = Trim(rest.substr(star + 1));
  }
  DType d;
  if (DTypeFromName(rest, &d)) {
    arg->type = d;
  } else {
    const AttrDef* attr = op.FindAttr(std::string(rest));
    if (attr == nullptr) {
      return errors::InvalidArgument("arg '", spec, "' names unknown type or attr '", rest, "'");
    }
    if (attr->type == "type") {
      arg->type_attr = attr->name;
    } else if (attr->type == "list(type)") {
      arg->type_list_attr = attr->name;
    } else {
      return errors::InvalidArgument("arg '", spec, "' refers to attr '", rest, "' of type ",
                                     attr->type);
    }
  }
  if (!arg->number_attr.empty()) {
    const AttrDef* n = op.FindAttr(arg->number_attr);
    if (n == nullptr || n->type != "int") {
      return errors::InvalidArgument("arg '", spec, "' needs an int attr '", arg->number_attr,
                                     "'");
    }
  }
  return Status::OK();
}

}  // namespace

const AttrDef* OpDef::FindAttr(const std::string& attr_name) const {
  for (const AttrDef& attr : attrs) {
    if (attr.name == attr_name) return &attr;
  }
  return nullptr;
}

OpDefBuilder::OpDefBuilder(std::string name) { op_.name = std::move(name); }
OpDefBuilder& OpDefBuilder::Input(std::string spec) {
  input_specs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string spec) {
  output_specs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string spec) {
  attr_specs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::AttrDefault(const std::string& name, AttrValue value) {
  extra_defaults_.emplace_back(name, std::move(value));
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  op_.is_stateful = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeFn fn) {
  // One check of every op's outputs here, so no shape function can hand the
  // graph a wrapped or negative dim, whatever arithmetic it forgot to check.
  if (!fn) {
    op_.shape_fn = nullptr;
    return *this;
  }
  op_.shape_fn = [fn = std::move(fn)](InferenceContext* c) -> Status {
    WEIR_RETURN_IF_ERROR(fn(c));
    return c->CheckOutputs();
  };
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(std::string doc) {
  op_.doc = std::move(doc);
  return *this;
}

StatusOr<OpDef> OpDefBuilder::Build() const {
  OpDef op = op_;
  auto context = [&](const std::string& spec) { return StrCat("op ", op.name, ": ", spec); };
  for (const std::string& spec : attr_specs_) {
    AttrDef attr;
    WEIR_RETURN_IF_ERROR(ParseAttrSpec(spec, &attr).WithContext(context(spec)));
    if (op.FindAttr(attr.name)) return errors::InvalidArgument(context(spec), ": duplicate attr");
    op.attrs.push_back(std::move(attr));
  }
  for (const auto& [name, value] : extra_defaults_) {
    auto it = std::find_if(op.attrs.begin(), op.attrs.end(),
                           [&](const AttrDef& a) { return a.name == name; });
    if (it == op.attrs.end()) {
      return errors::InvalidArgument(context(name), ": AttrDefault for an undeclared attr");
    }
    it->default_value = value;
    it->has_default = true;
  }
  for (const std::string& spec : input_specs_) {
    ArgDef arg;
    WEIR_RETURN_IF_ERROR(ParseArgSpec(spec, op, &arg).WithContext(context(spec)));
    op.inputs.push_back(std::move(arg));
  }
  for (const std::string& spec : output_specs_) {
    ArgDef arg;
    WEIR_RETURN_IF_ERROR(ParseArgSpec(spec, op, &arg).WithContext(context(spec)));
    op.outputs.push_back(std::move(arg));
  }
  return op;
}

OpRegistry* OpRegistry::Global() {
  static OpRegistry* const registry = new OpRegistry();
  return registry;
}

void OpRegistry::Register(const OpDefBuilder& builder) {
  StatusOr<OpDef> op = builder.Build();
  CHECK(op.ok()) << op.status();
  // Copy the name first: the key must not bind to the string the OpDef is
  // moved out of.
  std::string name = op->name;
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto [it, inserted] = ops_.emplace(name, std::make_unique<OpDef>(std::move(op).value()));
  CHECK(inserted) << "op " << name << " registered twice";
}

const OpDef* OpRegistry::Find(const std::string& op_name) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = ops_.find(op_name);
  return it == ops_.end() ? nullptr : it->second.get();
}

namespace {

// The words of a CamelCase op name: "TensorListPushBack" -> Tensor, List,
// Push, Back; digits and acronyms stay whole ("Conv2DBackpropInput" ->
// Conv2D, Backprop, Input; "LRNGrad" -> LRN, Grad).
std::vector<std::string_view> NameWords(std::string_view name) {
  auto upper = [&](size_t i) { return std::isupper(static_cast<unsigned char>(name[i])) != 0; };
  auto lower = [&](size_t i) { return std::islower(static_cast<unsigned char>(name[i])) != 0; };
  std::vector<std::string_view> words;
  size_t start = 0;
  for (size_t i = 1; i <= name.size(); ++i) {
    const bool starts_word =
        i < name.size() && upper(i) && (lower(i - 1) || (i + 1 < name.size() && lower(i + 1)));
    if (i == name.size() || starts_word) {
      words.push_back(name.substr(start, i - start));
      start = i;
    }
  }
  return words;
}

// The family of an unknown op among `names` (registered, sorted): the ops
// whose names start with the most leading words of `op_name` that any
// name starts with ("TensorListFoo": TensorList*), else those holding its
// longest word of four letters or more ("FractionalPool": *Pool*).
// Internal ops ('_') are left out. Returns the pattern and the names.
std::pair<std::string, std::vector<std::string>> OpFamily(const std::string& op_name,
                                                          const std::vector<std::string>& names) {
  std::vector<std::string_view> words = NameWords(op_name);
  std::vector<std::string> family;
  auto collect = [&](auto&& matches) {
    family.clear();
    for (const std::string& name : names) {
      if (!name.empty() && name[0] != '_' && name != op_name && matches(name))
        family.push_back(name);
    }
    return !family.empty();
  };
  for (size_t n = words.size() > 1 ? words.size() - 1 : 1; n >= 1 && !words.empty(); --n) {
    const std::string prefix(
        op_name.substr(0, words[n - 1].data() + words[n - 1].size() - op_name.data()));
    if (collect([&](const std::string& name) { return name.starts_with(prefix); })) {
      return {prefix + "*", family};
    }
  }
  std::vector<std::string_view> by_length = words;
  std::ranges::stable_sort(by_length, std::greater<>(), &std::string_view::size);
  for (std::string_view word : by_length) {
    if (word.size() < 4) break;
    if (collect([&](const std::string& name) { return name.find(word) != std::string::npos; })) {
      return {StrCat("*", word, "*"), family};
    }
  }
  return {"", {}};
}

}  // namespace

StatusOr<const OpDef*> OpRegistry::LookUp(const std::string& op_name) const {
  if (const OpDef* op = Find(op_name)) return op;
  std::vector<std::string> names;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    names.reserve(ops_.size());
    for (const auto& [name, def] : ops_) names.push_back(name);
  }
  // Suggest ops that differ only by case, a common slip ("Matmul").
  std::vector<std::string> close;
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(c));
    return s;
  };
  const std::string lowered = lower(op_name);
  for (const std::string& name : names) {
    if (lower(name) == lowered) close.push_back(name);
  }
  std::string hint = close.empty() ? "" : StrCat("; did you mean ", StrJoin(close, " or "), "?");
  // And the ops Weir has of its family, so that a user sees what to use
  // instead (or that the whole family is missing).
  auto [pattern, family] = OpFamily(op_name, names);
  constexpr size_t kMaxListed = 24;
  if (family.empty()) {
    hint += "; Weir has no op of its family";
  } else {
    const size_t more = family.size() > kMaxListed ? family.size() - kMaxListed : 0;
    family.resize(std::min(family.size(), kMaxListed));
    hint += StrCat("; the ops of its family (", pattern, ") that Weir has: ", StrJoin(family, ", "),
                   more > 0 ? StrCat(" and ", more, " more") : "");
  }
  return errors::NotFound("op type '", op_name, "' is not registered", hint);
}

std::vector<const OpDef*> OpRegistry::ListOps() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<const OpDef*> out;
  for (const auto& [name, def] : ops_) out.push_back(def.get());
  return out;
}

}  // namespace weir
