#!/usr/bin/env python3
"""Checks that every #include "weir/<layer>/..." under src/weir/ stays within
the layers its file may use (DESIGN.md, "Layers and folders": each layer may
use the layers above it in the list), so layering is checked, not kept by
convention.

  scripts/check_layering.py              # check this tree; exit 1 on a violation
  scripts/check_layering.py --root DIR   # check another tree
  scripts/check_layering.py --self-test  # check the checker on a temporary tree

Every offending include is printed as file:line with the rule it breaks.
"""

import argparse
import os
import re
import sys
import tempfile

# What each layer's non-test files may include. DESIGN.md's order, with one
# rule more: kernels/ see only framework interfaces, never graph/ or ops/
# (their shared shape rules live in framework/).
ALLOWED = {
    "base": {"base"},
    "framework": {"base", "framework"},
    "graph": {"base", "framework", "graph"},
    "ops": {"base", "framework", "graph", "ops"},
    "kernels": {"base", "framework", "kernels"},
    "runtime": {"base", "framework", "graph", "ops", "kernels", "runtime"},
    "distributed": {"base", "framework", "graph", "ops", "kernels", "runtime", "distributed"},
    "train": {"base", "framework", "graph", "ops", "kernels", "runtime", "distributed", "train"},
    "saved_model": {"base", "framework", "graph", "ops", "kernels", "runtime", "distributed", "train",
                    "saved_model"},
}

# Test files and their helpers are built into test binaries that link higher
# layers (TEST_DEPS): a kernel test builds its graph with ops/, a graph test
# places on kernels. They may include any layer. Outside src/weir/, tools/,
# bench/, tests/ and examples/ may include anything, so they are not scanned.
TEST_FILE = re.compile(r"(_test\.cc|_test_util\.(h|cc)|(^|/)[a-z_]*test_util\.(h|cc))$")

INCLUDE = re.compile(r'^\s*#\s*include\s+"weir/([A-Za-z0-9_]+)/([^"]+)"')
SOURCE = re.compile(r"\.(h|cc|cu|inc)$")


def layer_of(relpath):
    """The layer of a file under src/weir/, or None."""
    parts = relpath.split("/")
    if len(parts) < 4 or parts[0] != "src" or parts[1] != "weir":
        return None
    return parts[2]


def check(root):
    """Returns the violations under `root` as printable lines."""
    problems = []
    src = os.path.join(root, "src", "weir")
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for name in sorted(filenames):
            if not SOURCE.search(name):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            layer = layer_of(rel)
            if layer is None:
                continue
            if layer not in ALLOWED:
                problems.append(f"{rel}: folder src/weir/{layer}/ is not a layer of "
                                f"DESIGN.md; add it to ALLOWED in {sys.argv[0]}")
                continue
            if TEST_FILE.search(rel):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    target = match.group(1)
                    included = f"weir/{target}/{match.group(2)}"
                    if target in ALLOWED[layer]:
                        continue
                    allowed = ", ".join(sorted(ALLOWED[layer]))
                    problems.append(f"{rel}:{number}: includes {included}: {layer}/ may use "
                                    f"only {allowed} (not {target}/)")
    return problems


def self_test():
    """The checker fails a tree with violating includes and passes a clean one."""
    files = {
        # Violations.
        "src/weir/kernels/bad_kernel.cc": '#include "weir/framework/tensor.h"\n'
                                          '#include "weir/ops/shape_fns.h"\n',
        "src/weir/kernels/bad_kernel.h": '  #  include "weir/graph/graph.h"\n',
        "src/weir/base/bad_base.h": '#include "weir/framework/tensor.h"\n',
        "src/weir/graph/bad_graph.cc": '#include "weir/runtime/session.h"\n',
        # Allowed: a kernel test builds graphs; ops may use graph; runtime
        # uses everything below; a string that looks like an include.
        "src/weir/kernels/good_kernel_test.cc": '#include "weir/ops/standard_ops.h"\n',
        "src/weir/kernels/kernel_test_util.h": '#include "weir/ops/op_test_util.h"\n',
        "src/weir/ops/good_op.cc": '#include "weir/graph/scope.h"\n',
        "src/weir/runtime/good_runtime.cc": '#include "weir/kernels/all_kernels.h"\n',
        "src/weir/ops/gen/good_gen.cc": 'out << "#include \\"weir/runtime/x.h\\"";\n',
        "tools/anything.cc": '#include "weir/train/saver.h"\n',
    }
    expected = {"src/weir/kernels/bad_kernel.cc:2", "src/weir/kernels/bad_kernel.h:1",
                "src/weir/base/bad_base.h:1", "src/weir/graph/bad_graph.cc:1"}
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        found = {p.split(": ")[0] for p in check(root)}
        if found != expected:
            print(f"check_layering self-test FAILED: found {sorted(found)}, "
                  f"expected {sorted(expected)}", file=sys.stderr)
            return 1
        for rel in [r for r in files if r.split("/")[-1].startswith("bad_")]:
            os.remove(os.path.join(root, rel))
        if check(root):
            print(f"check_layering self-test FAILED on a clean tree: {check(root)}",
                  file=sys.stderr)
            return 1
    print("check_layering self-test passed")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    problems = check(os.path.abspath(args.root))
    for p in problems:
        print(p)
    if problems:
        print(f"check_layering: {len(problems)} include(s) break the layering "
              "(DESIGN.md, Layers and folders)", file=sys.stderr)
        return 1
    print("check_layering: every include keeps to its layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
