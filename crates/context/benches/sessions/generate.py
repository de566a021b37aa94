#!/usr/bin/env python3
"""Writes the pipeline bench's scripted sessions (run from this directory; standard library only).

Each line of a session is one event: `<kind> <tokens> <seconds before the next request> [target]`.
`prompt` is the user's message, `read`, `grep`, `edit`, `bash` and `todo` are a tool call and its
result, `answer` is the model's text answer that ends a turn (no request follows it). The files
are checked in; this script only documents how they were made (a fixed seed).
"""
import random


def reads(name, window, count, seed):
    rng = random.Random(seed)
    lines = [f"# {count} reads of ~3.5K tokens at a {window // 1000}K window, requests seconds apart",
             f"window {window}",
             "prompt 120 5 Read every module under src/ and explain how the service fits together."]
    for index in range(count):
        if index and index % 20 == 0:
            lines.append(f"answer {rng.randint(300, 700)}")
            lines.append(f"prompt {rng.randint(30, 90)} {rng.randint(20, 90)} Go on with the next twenty modules.")
        lines.append(f"read {rng.randint(3300, 3700)} {rng.randint(4, 15)} src/module_{index:03}.rs")
    lines.append(f"answer {rng.randint(800, 1500)}")
    open(name, "w").write("\n".join(lines) + "\n")


def mixed(name, seed):
    rng = random.Random(seed)
    files = [f"src/{part}.rs" for part in
             ["parser", "lexer", "server", "config", "routes", "store", "cache", "auth", "jobs", "cli",
              "metrics", "errors"]]
    lines = ["# a mixed session at a 200K window: edits, greps, tests and long answers, two pauses of",
             "# more than five minutes",
             "window 200000"]
    for turn in range(45):
        pause = rng.randint(20, 200)
        if turn in (15, 31):
            pause = rng.randint(480, 1500)
        lines.append(f"prompt {rng.randint(40, 400)} {pause} Turn {turn}: the next change.")
        if turn % 6 == 0:
            lines.append(f"todo 150 {rng.randint(3, 10)}")
        for _ in range(rng.randint(1, 6)):
            kind = rng.choices(["read", "grep", "edit", "bash"], [4, 2, 3, 2])[0]
            target = rng.choice(files[:5]) if rng.random() < 0.6 else rng.choice(files)
            wait = rng.randint(3, 40)
            if kind == "read":
                lines.append(f"read {rng.randint(1000, 6000)} {wait} {target}")
            elif kind == "grep":
                lines.append(f"grep {rng.randint(150, 2500)} {wait} fn_{rng.randint(0, 99)}")
            elif kind == "edit":
                lines.append(f"edit {rng.randint(250, 900)} {wait} {target}")
            else:
                lines.append(f"bash {rng.randint(200, 3000)} {wait} cargo test")
        lines.append(f"answer {rng.randint(800, 3000)}")
    open(name, "w").write("\n".join(lines) + "\n")


reads("reads-200k.session", 200_000, 140, 27)
reads("reads-60k.session", 60_000, 40, 28)
mixed("mixed-200k.session", 29)
