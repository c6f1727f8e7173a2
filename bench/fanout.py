"""LLM fan-out: N calls of L seconds each through S slots, against the ideal N*L/S.

    XDG_RUNTIME_DIR=/tmp .venv/bin/python bench/fanout.py [--calls 40] [--delay-s 0.25] ...

The scripted OpenAI-compatible server answers every chat call after `delay_s` = L (a fault of its
one rule). `semaphore`: T threads (more than S, so the limit really bites) call `LlmClient`
behind a Redis `LeaseSemaphore` of S slots. `no_semaphore`: S threads call the same client
without a limiter. Ratios:
- `<way>/ideal`: achieved wall time over N*L/S; 1.00x is perfect, above is overhead.
- `semaphore/no_semaphore`: what the shared limit costs at the same S (slot polling, Redis
  round trips); above 1 it is slower.
A sampler checks that the semaphore never let more than S calls hold a slot.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import redis

from bench.harness import median, print_header, print_ratio, services_env, timed
from graphrag.llm.client import LlmClient
from graphrag.llm.concurrency import LeaseSemaphore, background_policy
from graphrag.llm.messages import ChatMessage
from graphrag.settings import Settings
from tests.fakes.llm_script import Fault, Reply, Rule
from tests.fakes.scripted_llm import ScriptedLlmServer

SAMPLE_EVERY_S = 0.005  # how often the sampler reads the number of held slots


class SlotSampler:
    """Reads `holders()` in a background thread and keeps the highest value seen."""

    def __init__(self, semaphore: LeaseSemaphore) -> None:
        self.semaphore = semaphore
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="slot-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.semaphore.holders())
            time.sleep(SAMPLE_EVERY_S)

    def __enter__(self) -> SlotSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def fan_out(client: LlmClient, calls: int, threads: int) -> None:
    """`calls` completions from a pool of `threads` threads; raises if any call failed."""

    def one(index: int) -> str:
        messages = [ChatMessage(role="user", content=f"chunk {index}")]
        return client.complete(messages).content

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="fanout") as pool:
        answers = list(pool.map(one, range(calls)))
    if len(answers) != calls:
        raise SystemExit(f"{len(answers)} answers for {calls} calls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=40, help="N: chunks, one call each")
    parser.add_argument("--delay-s", type=float, default=0.25, help="L: seconds per call")
    parser.add_argument("--slots", type=int, default=4, help="S: parallel LLM slots")
    parser.add_argument("--threads", type=int, default=0, help="T with the semaphore (0: 2*S)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each way (median)")
    parser.add_argument("--redis-db", type=int, default=1, help="Redis database of the slots")
    args = parser.parse_args()
    threads = args.threads or 2 * args.slots
    print_header("fanout", {**vars(args), "threads": threads})
    os.environ.update(services_env())
    settings = Settings()
    redis_url = settings.redis.url.rsplit("/", 1)[0] + f"/{args.redis_db}"
    connection = redis.Redis.from_url(redis_url)
    llm = settings.llm
    semaphore = LeaseSemaphore(
        connection,
        f"bench:llm-slots:{uuid.uuid4().hex}",
        args.slots,
        background_policy(llm),
        llm.concurrency_wait_s,
    )
    rule = Rule(name="slow", reply=Reply(content="{}"), fault=Fault(delay_s=args.delay_s))
    with ScriptedLlmServer() as server:
        server.set_rules([rule])
        llm = llm.model_copy(update={"base_url": server.openai_base_url, "model": "scripted"})
        limited, free = LlmClient(llm, semaphore), LlmClient(llm)
        fan_out(free, args.slots, args.slots)  # warm-up: connections, imports
        try:
            with SlotSampler(semaphore) as sampler:
                walls = measure(limited, free, args.calls, threads, args.slots, args.repeats)
        finally:
            connection.delete(semaphore.key)
            connection.close()
    report(walls, args, threads, sampler.peak)


def measure(
    limited: LlmClient, free: LlmClient, calls: int, threads: int, slots: int, repeats: int
) -> dict[str, list[float]]:
    """Wall seconds of each way per repeat, alternating which way goes first."""
    walls: dict[str, list[float]] = {"semaphore": [], "no_semaphore": []}
    for repeat in range(repeats):
        ways = [
            ("semaphore", lambda: fan_out(limited, calls, threads)),
            ("no_semaphore", lambda: fan_out(free, calls, slots)),
        ]
        for name, work in ways if repeat % 2 == 0 else reversed(ways):
            walls[name].append(timed(work)[1])
    return walls


def report(
    walls: dict[str, list[float]], args: argparse.Namespace, threads: int, peak: int
) -> None:
    ideal = args.calls * args.delay_s / args.slots
    common = f"N={args.calls} calls, L={args.delay_s}s, S={args.slots}"
    limited, free = median(walls["semaphore"]), median(walls["no_semaphore"])
    print_ratio(
        "fanout_wall",
        "semaphore",
        "ideal",
        limited / ideal,
        f"n={args.repeats} runs, {common}, T={threads} threads; median {limited:.2f}s, "
        f"ideal {ideal:.2f}s; peak slots held {peak} (limit {args.slots})",
    )
    print_ratio(
        "fanout_wall",
        "no_semaphore",
        "ideal",
        free / ideal,
        f"n={args.repeats} runs, {common}, S threads; median {free:.2f}s, ideal {ideal:.2f}s",
    )
    print_ratio(
        "fanout_wall",
        "semaphore",
        "no_semaphore",
        limited / free,
        f"n={args.repeats} runs, {common}; medians {limited:.2f}s vs {free:.2f}s",
    )
    if peak > args.slots:
        raise SystemExit(f"the semaphore let {peak} calls hold a slot (limit {args.slots})")


if __name__ == "__main__":
    main()
