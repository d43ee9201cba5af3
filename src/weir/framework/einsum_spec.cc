#include "weir/framework/einsum_spec.h"

#include <algorithm>

#include "weir/base/str_util.h"

namespace weir {
namespace {

constexpr int kNamedLabels = 52;

int LabelOf(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -2;
}

char CharOf(int label) { return label < 26 ? static_cast<char>('a' + label) : static_cast<char>('A' + label - 26); }

Status Malformed(std::string_view equation, std::string_view why) {
  return errors::InvalidArgument("Einsum: invalid equation '", equation, "': ", why);
}

// One term ("ij", "...ij", "i...j") into label ids.
StatusOr<std::vector<int>> ParseTerm(std::string_view term, std::string_view equation) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (term.substr(i, 3) != "..." || ellipsis) {
        return Malformed(equation, StrCat("'.' must come as one '...' per term, in '", term, "'"));
      }
      ellipsis = true;
      labels.push_back(EinsumEquation::kEllipsisLabel);
      i += 2;
      continue;
    }
    const int label = LabelOf(term[i]);
    if (label < 0) {
      return Malformed(equation, StrCat("character '", std::string(1, term[i]),
                                        "' is not a letter, ',', '->' or '...'"));
    }
    labels.push_back(label);
  }
  return labels;
}

std::string ShapesString(const std::vector<PartialShape>& shapes) {
  std::string out;
  for (size_t i = 0; i < shapes.size(); ++i) out += StrCat(i ? " and " : "", shapes[i].DebugString());
  return out;
}

}  // namespace

StatusOr<EinsumEquation> ParseEinsumEquation(std::string_view equation, int num_inputs) {
  std::string_view inputs = equation, output;
  const size_t arrow = equation.find("->");
  const bool explicit_output = arrow != std::string_view::npos;
  if (explicit_output) {
    inputs = equation.substr(0, arrow);
    output = equation.substr(arrow + 2);
    if (output.find("->") != std::string_view::npos) return Malformed(equation, "more than one '->'");
    if (output.find(',') != std::string_view::npos) return Malformed(equation, "',' in the output");
  }
  EinsumEquation parsed;
  size_t start = 0;
  while (true) {
    const size_t comma = inputs.find(',', start);
    std::string_view term = inputs.substr(start, comma == std::string_view::npos ? comma : comma - start);
    // Spaces are harmless in NumPy's notation; TensorFlow's parser drops them too.
    std::string compact;
    for (char c : term) if (c != ' ') compact.push_back(c);
    WEIR_ASSIGN_OR_RETURN(std::vector<int> labels, ParseTerm(compact, equation));
    parsed.inputs.push_back(std::move(labels));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  const int terms = static_cast<int>(parsed.inputs.size());
  if (terms != 1 && terms != 2) {
    return Malformed(equation, StrCat(terms, " operand terms; Einsum takes 1 or 2 operands"));
  }
  if (terms != num_inputs) {
    return Malformed(equation, StrCat(terms, " operand terms for ", num_inputs, " inputs"));
  }
  std::vector<int> count(kNamedLabels, 0);
  bool any_ellipsis = false;
  for (const std::vector<int>& term : parsed.inputs) {
    for (int label : term) {
      if (label == EinsumEquation::kEllipsisLabel) {
        any_ellipsis = true;
      } else {
        ++count[label];
      }
    }
  }
  if (explicit_output) {
    std::string compact;
    for (char c : output) if (c != ' ') compact.push_back(c);
    WEIR_ASSIGN_OR_RETURN(parsed.output, ParseTerm(compact, equation));
    for (int label : parsed.output) {
      if (label >= 0 && count[label] == 0) {
        return Malformed(equation, StrCat("output label '", std::string(1, CharOf(label)),
                                          "' appears in no operand"));
      }
    }
  } else {
    if (any_ellipsis) parsed.output.push_back(EinsumEquation::kEllipsisLabel);
    // ASCII order, as NumPy: upper case before lower case.
    for (int label = 26; label < kNamedLabels; ++label) if (count[label] == 1) parsed.output.push_back(label);
    for (int label = 0; label < 26; ++label) if (count[label] == 1) parsed.output.push_back(label);
  }
  return parsed;
}

StatusOr<EinsumDims> ResolveEinsum(const EinsumEquation& equation, std::string_view text,
                                   const std::vector<PartialShape>& shapes) {
  auto mismatch = [&](const std::string& why) {
    return errors::InvalidArgument("Einsum: equation '", text, "' does not fit operands of shape ",
                                   ShapesString(shapes), ": ", why);
  };
  // The rank "..." stands for in each operand, and in all (the broadcast).
  const int n = static_cast<int>(equation.inputs.size());
  std::vector<int> ellipsis_rank(n, 0);
  int broadcast_rank = 0;
  for (int i = 0; i < n; ++i) {
    const std::vector<int>& term = equation.inputs[i];
    const bool has_ellipsis = std::count(term.begin(), term.end(), EinsumEquation::kEllipsisLabel) > 0;
    const int named = static_cast<int>(term.size()) - (has_ellipsis ? 1 : 0);
    const int rank = shapes[i].rank();
    if (has_ellipsis ? rank < named : rank != named) {
      return mismatch(StrCat("operand ", i, " has rank ", rank, " but its term '",
                             EinsumTerm(term), "' has ", named, " labels"));
    }
    ellipsis_rank[i] = rank - named;
    broadcast_rank = std::max(broadcast_rank, ellipsis_rank[i]);
  }
  const bool output_ellipsis = std::count(equation.output.begin(), equation.output.end(),
                                          EinsumEquation::kEllipsisLabel) > 0;
  if (broadcast_rank > 0 && !output_ellipsis) {
    return mismatch(StrCat("'...' stands for ", broadcast_rank,
                           " dims, so the output must have '...' too"));
  }
  EinsumDims dims;
  dims.num_labels = kNamedLabels + broadcast_rank;
  // Axis labels; "..." dims align from the right, as NumPy broadcasting.
  auto expand = [&](const std::vector<int>& term, int rank) {
    std::vector<int> labels;
    for (int label : term) {
      if (label != EinsumEquation::kEllipsisLabel) {
        labels.push_back(label);
        continue;
      }
      for (int j = broadcast_rank - rank; j < broadcast_rank; ++j) labels.push_back(kNamedLabels + j);
    }
    return labels;
  };
  for (int i = 0; i < n; ++i) dims.inputs.push_back(expand(equation.inputs[i], ellipsis_rank[i]));
  dims.output = expand(equation.output, broadcast_rank);
  // A label's size: the one known size all its axes share, where "..."
  // dims of size 1 stretch to the others' (NumPy broadcasting).
  dims.label_size.assign(dims.num_labels, -1);
  std::vector<bool> saw_unknown(dims.num_labels, false);
  for (int i = 0; i < n; ++i) {
    for (size_t axis = 0; axis < dims.inputs[i].size(); ++axis) {
      const int label = dims.inputs[i][axis];
      const bool broadcasts = label >= kNamedLabels;
      const int64_t size = shapes[i].dim(static_cast<int>(axis));
      int64_t& known = dims.label_size[label];
      if (size == -1) {
        saw_unknown[label] = true;
      } else if (known == -1 || known == size || (broadcasts && size == 1)) {
        if (known == -1) known = size;
      } else if (broadcasts && known == 1) {
        known = size;
      } else {
        return mismatch(broadcasts ? StrCat("the '...' dims of sizes ", known, " and ", size,
                                            " do not broadcast")
                                   : StrCat("label '", std::string(1, CharOf(label)),
                                            "' has sizes ", known, " and ", size));
      }
    }
  }
  // An unknown "..." dim may still stretch a known 1.
  for (int label = kNamedLabels; label < dims.num_labels; ++label) {
    if (saw_unknown[label] && dims.label_size[label] == 1) dims.label_size[label] = -1;
  }
  dims.broadcast.resize(n);
  for (int i = 0; i < n; ++i) {
    for (size_t axis = 0; axis < dims.inputs[i].size(); ++axis) {
      const int64_t full = dims.label_size[dims.inputs[i][axis]];
      dims.broadcast[i].push_back(shapes[i].dim(static_cast<int>(axis)) == 1 && full != 1);
    }
  }
  return dims;
}

std::string EinsumTerm(const std::vector<int>& labels) {
  std::string term;
  for (int label : labels) {
    if (label == EinsumEquation::kEllipsisLabel) {
      term += "...";
    } else {
      term.push_back(CharOf(label));
    }
  }
  return term;
}

}  // namespace weir
