#!/usr/bin/env bash
# Formats C++ files with the root .clang-format (clang-format-16, installed
# by scripts/install_deps.sh).
#
#   scripts/format.sh FILE...             # format these files in place
#   scripts/format.sh --since REV         # format the C++ files changed since REV
#                                         # (committed, uncommitted or untracked)
#   scripts/format.sh --check ...         # change nothing; list the files that
#                                         # would change and exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."

CLANG_FORMAT=${CLANG_FORMAT:-clang-format-16}
check=0
files=()
while (($#)); do
  case $1 in
    --check) check=1; shift ;;
    --since)
      [[ $# -ge 2 ]] || { echo "format.sh: --since needs a git revision" >&2; exit 2; }
      mapfile -t changed < <( { git diff --name-only --diff-filter=d "$2" --;
                                git ls-files --others --exclude-standard; } | sort -u)
      files+=("${changed[@]}")
      shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) files+=("$1"); shift ;;
  esac
done

cpp=()
for f in "${files[@]}"; do
  [[ $f =~ \.(h|cc)$ && -f $f ]] && cpp+=("$f")
done
if ((${#cpp[@]} == 0)); then
  echo "format.sh: no C++ files to format"
  exit 0
fi

if ((check)); then
  status=0
  for f in "${cpp[@]}"; do
    if ! "$CLANG_FORMAT" --style=file "$f" | cmp -s - "$f"; then
      echo "would change: $f"
      status=1
    fi
  done
  exit $status
fi
"$CLANG_FORMAT" --style=file -i "${cpp[@]}"
echo "format.sh: formatted ${#cpp[@]} file(s)"
