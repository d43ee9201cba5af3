"""Placeholder: writes empty gen_ops modules (replaced by the generator)."""
import argparse, os
p = argparse.ArgumentParser(); p.add_argument("--extension"); p.add_argument("--out-dir")
a = p.parse_args()
for n in ("gen_ops.py", "gen_ops.pyi"):
    open(os.path.join(a.out_dir, n), "w").write("")
