"""Record size and memory with huge model replies (issue 33, item 4: size caps).

An OpenAI-compatible stand-in in a child process answers every request with the same text reply of
``--reply-mb`` MB (its body built once). ``callbench run`` plays ``--cases`` starter cases against it at
``--concurrency`` in another child, once with the default size limits and once with the reply limit
raised past the reply (no cap). Prints, for each, the size of ``records.jsonl`` and the peak RSS of
the ``callbench run`` process (its own ``ru_maxrss``, from ``os.wait4``).

    python bench/record_caps.py                       # 8 cases of 50 MB replies
    python bench/record_caps.py --reply-mb 5 --cases 4

Before size caps (and with the final text stored beside the last round's), 8 cases of 50 MB replies
gave an 840 MB ``records.jsonl`` and 0.8-1.1 GB RSS.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def serve(reply_mb: float) -> None:
    """The child: an OpenAI-compatible endpoint whose every answer is the same long text."""
    text = "HEAD " + "é" * int(reply_mb * 1_000_000 / 2) + " TAIL"
    body = json.dumps(
        {
            "id": "bench",
            "object": "chat.completion",
            "model": "bench",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
        ensure_ascii=False,
    ).encode()
    del text

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def measure(
    port: int, cases: int, concurrency: int, limits: list[str], out: Path
) -> tuple[float, float, float]:
    """``callbench run`` in a child: (records.jsonl MB, peak RSS MB, seconds)."""
    argv = [sys.executable, "-m", "callbench.cli.main", "run", "--suite", "starter", "--limit", str(cases)]
    argv += ["--model", f"openai:bench@http://127.0.0.1:{port}/v1", "--no-cache", "--progress", "quiet"]
    argv += ["--concurrency", str(concurrency), "--request-timeout", "300", "--case-timeout", "600"]
    argv += [*limits, "-o", str(out)]
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage
        process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        if process.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"callbench run failed ({process.returncode}): {errors.read().strip()}")
    rss_mb = usage.ru_maxrss / 1024  # KiB on Linux
    return (out / "records.jsonl").stat().st_size / 1e6, rss_mb, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reply-mb", type=float, default=50.0)
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(args.reply_mb)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        print(f"{args.cases} starter cases, {args.reply_mb:g} MB replies, --concurrency {args.concurrency}")
        print(f"{'size limits':<28} {'records.jsonl':>14} {'peak RSS':>10} {'time':>8}")
        uncapped = f"reply={int(args.reply_mb * 3) + 1}MB"
        for label, limits in (
            ("default (reply=1MiB)", []),
            (f"--size-limit {uncapped}", ["--size-limit", uncapped]),
        ):
            with tempfile.TemporaryDirectory() as tmp:
                size_mb, rss_mb, seconds = measure(
                    port, args.cases, args.concurrency, limits, Path(tmp) / "run"
                )
            print(f"{label:<28} {size_mb:>11.1f} MB {rss_mb:>7.0f} MB {seconds:>7.1f}s")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
