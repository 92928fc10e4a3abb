"""Peak memory and time to digest a large Claude Code transcript (default 60 MB).

Builds a transcript of realistic entries (prompts, tool calls, results of a few KB, some pasted
images of several MB each), then digests it in a fresh process per mode and reports that
process's peak RSS next to a bare interpreter's:

- ``stream``: every byte read, line by line (what a Stop does over a session's life);
- ``default``: a never-read transcript as SessionStart recovers it (first prompt + last 8 MiB).

    python benchmarks/transcript_memory.py [--mb 60]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
from keeper.capture import transcript
if sys.argv[2] == "stream":
    transcript.TAIL_BUDGET = float("inf")
start = time.perf_counter()
activity = transcript.Activity()
offset = transcript.update(activity, sys.argv[1], 0) if sys.argv[2] != "none" else 0
elapsed = time.perf_counter() - start
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": elapsed, "peak_mb": peak_kb / 1024, "prompts": activity.prompt_count,
                  "tools": sum(activity.tools.values()), "skipped": activity.skipped, "offset": offset}))
"""


def build(path: str, megabytes: int) -> None:
    block = "x" * 3000
    image = "A" * (4 << 20)
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        while fh.tell() < megabytes << 20:
            n += 1
            fh.write(
                json.dumps(
                    {
                        "type": "user",
                        "timestamp": f"2026-11-20T10:00:{n % 60:02d}Z",
                        "message": {"content": f"prompt {n}"},
                    }
                )
                + "\n"
            )
            for i in range(8):
                use = {"type": "tool_use", "id": f"t{n}-{i}", "name": "Bash", "input": {"command": f"run {n} {i}"}}
                fh.write(json.dumps({"type": "assistant", "message": {"content": [use]}}) + "\n")
                result = {"type": "tool_result", "tool_use_id": f"t{n}-{i}", "content": block}
                fh.write(json.dumps({"type": "user", "message": {"content": [result]}}) + "\n")
            if n % 30 == 0:
                picture = {"type": "image", "source": {"type": "base64", "data": image}}
                fh.write(json.dumps({"type": "user", "message": {"content": [picture]}}) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=60, help="transcript size in MB (default 60)")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="keeper-transcript-")
    path = os.path.join(folder, "session.jsonl")
    build(path, args.mb)
    print(f"transcript: {os.path.getsize(path) / (1 << 20):.1f} MiB, {sys.executable}")
    for mode in ("none", "stream", "default"):
        done = subprocess.run([sys.executable, "-c", CHILD, path, mode], capture_output=True, text=True, check=True)
        result = json.loads(done.stdout)
        label = {
            "none": "interpreter + keeper import",
            "stream": "stream the whole file",
            "default": "recover (head + 8 MiB tail)",
        }[mode]
        print(
            f"{label:30} peak RSS {result['peak_mb']:6.1f} MiB  {result['seconds']:6.2f} s  "
            f"prompts {result['prompts']}, tools {result['tools']}, over-long lines skipped {result['skipped']}"
        )
    os.remove(path)
    os.rmdir(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
