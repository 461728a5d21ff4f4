#!/usr/bin/env bash
# Production files over 700 lines and functions over 120 lines (issue 16).
#
# Production code is src/**/*.rs without test code: files named tests.rs
# and the `#[cfg(test)] mod tests` block that ends a file are left out.
# Functions are measured from their `fn` line to the brace that closes the
# body (braces in strings, chars and comments do not count; the code is
# rustfmt'd, so one item starts a line). A size may be explained by a plain
# comment starting `// Long` (e.g. `// Long (about 140 lines): why`) — for a file anywhere before its first item,
# for a function in the comment and attribute lines right above it (or on
# the first line of its body); explained ones print with `ok`, the others
# with `LONG`. Exits 1 if some are not explained.
#
# Usage: scripts/sizes.sh [SRC_DIR]   (default: the repository's src/)
set -euo pipefail
root="${1:-$(dirname "$0")/../src}"
exec python3 - "$root" <<'PY'
import os, re, sys

root = sys.argv[1]
FILE_MAX, FN_MAX = 700, 120
FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?((const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+([A-Za-z0-9_]+)")


def code_only(text):
    """`text` with strings, chars and comments blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j): depth += 1; j += 2
                elif text.startswith("*/", j): depth -= 1; j += 2
                else: j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i-1].isalnum() or text[i-1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + len(hashes) + 2)
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1])); i = j + 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'", text[i:])
            if m:
                out.append(" " * len(m.group(0))); i += len(m.group(0))
            else:
                out.append(c); i += 1
        else:
            out.append(c); i += 1
    return "".join(out)


def production(path, text):
    cut = text.find("#[cfg(test)]\nmod tests {")
    return text if cut < 0 else text[:cut]


def explained_above(lines, i):
    j = i - 1
    while j >= 0:
        s = lines[j].strip()
        if re.match(r"// Long\b", s):
            return True
        if s.startswith("//") or s.startswith("#["):
            j -= 1
            continue
        return False
    return False


bad = 0
rows = []
for dirpath, _, files in os.walk(root):
    for f in sorted(files):
        if not f.endswith(".rs") or f == "tests.rs":
            continue
        path = os.path.join(dirpath, f)
        rel = os.path.relpath(path, os.path.join(root, ".."))
        text = production(path, open(path, encoding="utf-8").read())
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > FILE_MAX:
            head = []
            for l in lines:
                s = l.strip()
                if s and not s.startswith("//") and not s.startswith("#!"):
                    break
                head.append(s)
            ok = any(re.match(r"// Long\b", s) for s in head)
            bad += not ok
            rows.append((rel, 0, "file", len(lines), ok))
        code = code_only(text).split("\n")
        for i, line in enumerate(code):
            m = FN.match(line)
            if not m:
                continue
            depth, start, end = 0, None, None
            for k in range(i, len(code)):
                for ch in code[k]:
                    if start is None and ch == ";" and depth == 0:
                        end = -1
                        break
                    if ch == "{":
                        depth += 1
                        start = k if start is None else start
                    elif ch == "}":
                        depth -= 1
                        if start is not None and depth == 0:
                            end = k
                            break
                if end is not None:
                    break
            if end is None or end < 0:
                continue
            size = end - i + 1
            if size > FN_MAX:
                first = lines[start + 1].strip() if start + 1 < len(lines) else ""
                ok = explained_above(lines, i) or re.match(r"// Long\b", first)
                bad += not ok
                rows.append((rel, i + 1, "fn " + m.group(5), size, ok))
for rel, line, what, size, ok in sorted(rows):
    where = rel if line == 0 else f"{rel}:{line}"
    print(f"{'ok  ' if ok else 'LONG'}  {size:5}  {where}  {what}")
sys.exit(1 if bad else 0)
PY
