#!/usr/bin/env python3
"""Keeps README.md and docs/ true to the code.

1. Every relative link in README.md, docs/*.md and the Markdown files they link resolves (file,
   and #anchor to a heading of that file).
2. docs/commands.md's synopsis lists exactly the options each subcommand's --help prints.
3. Every option of a `focal-eval SUB ...` line in README.md or docs/ exists in SUB's --help.
4. Every `focal-eval` command in README.md's code blocks runs and exits 0, in order, in one
   scratch directory, with small limits (see Shrink()): on the default model, and where a
   command names a model path that does not exist here, on the bundled stories260K.

Usage: docs_test.py FOCAL_EVAL_BIN STORIES260K_DIR [--no-run]
Exit 77 (skipped) when the default model is missing, unless CI=true.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def slug(heading):
    """GitHub's anchor for a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    out = set()
    in_fence = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            out.add(slug(line.lstrip("#")))
    return out


def code_lines(path):
    """Command lines of the file's code blocks (fenced or indented by 4), continuations joined."""
    lines, in_fence, in_indented, prev_blank = [], False, False, True
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            lines.append(line.strip())
        elif line.startswith("    ") and (prev_blank or in_indented):
            in_indented = True
            lines.append(line.strip())
        elif line.strip():
            in_indented = False
        prev_blank = not line.strip()
    joined, cur = [], ""
    for line in lines:
        # A synopsis wraps its options onto lines that start with "[" or "--".
        if not cur and joined and joined[-1].startswith("focal-eval") and line[:1] in "[-" \
                and line:
            joined[-1] += " " + line
            continue
        cur = cur + " " + line if cur else line
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
            continue
        joined.append(cur)
        cur = ""
    return joined


def check_links(start_files):
    todo, seen = list(start_files), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        text = open(path, encoding="utf-8").read()
        text = re.sub(r"`[^`\n]*`", "", text)  # links inside code spans are not links
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            rel = os.path.relpath(path, ROOT)
            if not os.path.exists(dest):
                fail(f"{rel}: link to {target}: {os.path.relpath(dest, ROOT)} does not exist")
                continue
            if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                fail(f"{rel}: link to {target}: no heading with that anchor")
            if dest.endswith(".md") and dest.startswith(ROOT):
                todo.append(dest)
    return seen


def help_options(binary, sub):
    out = subprocess.run([binary] + sub.split() + ["--help"], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"`focal-eval {sub} --help` exited {out.returncode}")
        return set()
    opts = set()
    for line in out.stdout.splitlines():
        m = re.match(r"^\s+(-\w,)?(--[a-z][a-z0-9-]*(?:,--[a-z][a-z0-9-]*)*)", line)
        if m:
            opts.update(m.group(2).split(","))
    return opts - {"--help", "--help-all"}


def subcommand_of(cmd):
    words = cmd.split()
    if len(words) < 2 or words[0] != "focal-eval":
        return None
    if words[1] == "data" and len(words) > 2:
        return "data " + words[2].split("|")[0]
    return words[1]


def check_options(binary, doc_files):
    subs = {}
    synopsis = os.path.join(ROOT, "docs", "commands.md")
    for cmd in code_lines(synopsis):
        sub = subcommand_of(cmd)
        if sub:
            subs.setdefault(sub, set()).update(OPTION.findall(cmd))
            if sub == "data list":
                subs.setdefault("data verify", set()).update(OPTION.findall(cmd))
    if "compare" in subs and "run" in subs:
        subs["compare"] |= subs["run"] - {"--model", "--focal-temperature"}
    helps = {}
    for sub in sorted(subs):
        helps[sub] = help_options(binary, sub)
        for opt in sorted(subs[sub] - helps[sub]):
            fail(f"docs/commands.md: `focal-eval {sub}` shows {opt}, which its --help does not have")
        for opt in sorted(helps[sub] - subs[sub]):
            fail(f"docs/commands.md: `focal-eval {sub} --help` has {opt}, missing from the synopsis")
    for path in doc_files:
        for cmd in code_lines(path):
            sub = subcommand_of(cmd)
            if not sub:
                continue
            if sub not in helps:
                helps[sub] = help_options(binary, sub)
            for opt in OPTION.findall(cmd):
                if opt not in helps[sub]:
                    fail(f"{os.path.relpath(path, ROOT)}: `{cmd[:60]}...` uses {opt}, "
                         f"not an option of `focal-eval {sub}`")


def Shrink(args, stories):
    """The README's command with test-sized work: 2 documents a task, one short long-context
    task at 1024 tokens, stories260K for model paths that do not exist here."""
    out, i = [], 0
    sub = args[0]
    has_limit = False
    long_context = "--lengths" in args
    while i < len(args):
        a = args[i]
        if a in ("--model", "--base", "--focal") and i + 1 < len(args):
            path, at, temp = args[i + 1].partition("@")
            if not os.path.exists(os.path.expanduser(path)):
                path = stories
            out += [a, path + at + temp]
            i += 2
            continue
        if a == "--limit":
            out += ["--limit", "1" if long_context else "2"]
            has_limit = True
            i += 2
            continue
        if a == "--lengths" and i + 1 < len(args):
            out += ["--lengths", "1024"]
            i += 2
            continue
        if a == "--tasks" and long_context and i + 1 < len(args):
            out += ["--tasks", "ruler_niah_single_1"]
            i += 2
            continue
        out.append(a)
        i += 1
    if sub in ("run", "compare", "prompts") and not has_limit and "--from-shards" not in args:
        out += ["--limit", "1" if long_context else "2"]
    return out


def run_readme(binary, stories):
    commands = [c for c in code_lines(os.path.join(ROOT, "README.md"))
                if c.startswith("focal-eval ")]
    if len(commands) < 5:
        fail(f"README.md shows {len(commands)} focal-eval commands; expected the everyday five or more")
    with tempfile.TemporaryDirectory(prefix="focal-docs-") as work:
        for cmd in commands:
            args = Shrink(shlex.split(cmd)[1:], stories)
            args = [os.path.expanduser(a) for a in args]
            print("$ focal-eval " + " ".join(args), flush=True)
            res = subprocess.run([binary] + args, cwd=work, capture_output=True, text=True,
                                 timeout=600)
            if res.returncode != 0:
                fail(f"README.md command `{cmd}` exited {res.returncode}:\n"
                     + res.stderr[-2000:])
    return len(commands)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, stories = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    docs = [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
        if f.endswith(".md"))
    seen = check_links(docs)
    print(f"links: {len(seen)} Markdown files checked", flush=True)
    check_options(binary, docs)
    print("options: synopsis and --help compared", flush=True)
    if "--no-run" not in sys.argv:
        probe = subprocess.run([binary, "inspect"], capture_output=True, text=True)
        if probe.returncode != 0:
            msg = "the default model is missing (bash scripts/fetch_default_model.sh)"
            if os.environ.get("CI") == "true":
                fail(msg)
            else:
                print("SKIP README commands: " + msg)
                return 1 if failures else 77
        else:
            n = run_readme(binary, stories)
            print(f"README commands: {n} run")
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("docs: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
