"""weir.raw_ops: every registered op as OpName(**inputs_and_attrs) (filled by H2)."""
