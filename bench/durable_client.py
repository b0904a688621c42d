"""The bare client with the least a resumable harness must add: every answer journaled.

``run_durable_client`` posts the same bodies as throughput.py's bare client, through one aiohttp
session at the same concurrency, and for each answer does what any harness that survives a kill
without losing paid answers has to do, and nothing else: the request's SHA-256 as its key, the
request and the answer as one SQLite row, a one-line JSON record of the item (prompt, output,
prediction, gold, score) as a second row, both committed before the worker sends its next request
(one commit per event-loop iteration for every answer that arrived in it: WAL, synchronous=NORMAL,
as glotbench's journal). No prompt rendering, extraction, checksums, summary or samples file.

Its CPU per item against the bare client's is the floor of a durable harness on this client;
throughput.py prints it beside glotbench's.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import time
from pathlib import Path


def run_durable_client(base_url: str, bodies: list[bytes], concurrency: int, db_path: Path) -> float:
    """items/s of posting ``bodies`` with every answer journaled in ``db_path`` (a new file)."""
    import aiohttp
    import orjson

    db = sqlite3.connect(db_path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, request TEXT, response TEXT, created REAL)")
    db.execute("CREATE TABLE samples (id TEXT PRIMARY KEY, record TEXT, created REAL)")

    async def go() -> float:
        queue: asyncio.Queue = asyncio.Queue()
        for i, body in enumerate(bodies):
            queue.put_nowait((i, body))
        pending: list[tuple[tuple, tuple]] = []
        loop = asyncio.get_running_loop()

        def commit() -> None:  # every answer of this loop iteration, in one transaction
            db.execute("BEGIN")
            db.executemany("INSERT INTO responses VALUES (?,?,?,?)", [p[0] for p in pending])
            db.executemany("INSERT INTO samples VALUES (?,?,?)", [p[1] for p in pending])
            db.execute("COMMIT")
            pending.clear()

        headers = {"Authorization": "Bearer bench", "Content-Type": "application/json"}
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), headers=headers) as session:
            url = base_url + "/chat/completions"

            async def worker() -> None:
                while not queue.empty():
                    i, body = queue.get_nowait()
                    key = hashlib.sha256(body).hexdigest()
                    async with session.post(url, data=body, allow_redirects=False) as resp:
                        raw = await resp.read()
                    text = orjson.loads(raw)["choices"][0]["message"]["content"]
                    pred = text.strip()[:1]
                    record = orjson.dumps({"prompt": body.decode(), "outputs": [{"text": text}], "pred": pred,
                                           "gold": "A", "values": {"accuracy": float(pred == "A")}})
                    now = time.time()
                    pending.append(((key, body, raw, now), (str(i), record, now)))
                    if len(pending) == 1:
                        loop.call_soon(commit)
                    await asyncio.sleep(0)  # the commit runs before this worker sends again

            t0 = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return len(bodies) / (time.perf_counter() - t0)

    try:
        return asyncio.run(go())
    finally:
        db.close()
