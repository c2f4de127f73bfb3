"""A client of `kforge serve` (the verdict service), on Python's standard library only.

    from kforge_client import KforgeClient
    client = KforgeClient("http://127.0.0.1:8077")           # token="..." off loopback
    ids = client.submit([{"problem": "relu", "candidate": source, "options": {"seed": 1}}])
    for job in client.wait(ids):
        print(job["id"], job["verdict"]["passed"] if "verdict" in job else job["error"])

`submit` retries a batch the service refuses for load (429 and 503 carry Retry-After); a
refused job (400) raises ValueError with the service's sentence. Several servers: give
`KforgeClient.spread` their URLs and it sends each batch to the least loaded.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any, Iterable, Iterator


class KforgeClient:
    def __init__(self, url: str, token: str | None = None, client: str | None = None, timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.client = client
        self.timeout_s = timeout_s

    def _request(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        if self.client:
            req.add_header("X-Kforge-Client", self.client)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as res:
                return res.status, dict(res.headers), json.loads(res.read() or b"null")
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                payload = json.loads(text)
            except ValueError:
                payload = {"error": text.decode(errors="replace")}
            return e.code, dict(e.headers), payload

    def submit(self, jobs: list[dict[str, Any]] | dict[str, Any], max_wait_s: float = 3600.0) -> list[str]:
        """Sends a job or a batch; returns the job ids once the service has stored them."""
        deadline = time.monotonic() + max_wait_s
        while True:
            status, headers, body = self._request("POST", "/v1/verdicts", jobs)
            if status == 202:
                return list(body["ids"])
            if status in (429, 503) and time.monotonic() < deadline:
                time.sleep(min(float(headers.get("Retry-After", "1")), 60.0))
                continue
            if status == 400:
                raise ValueError(body.get("error", "the service refused the batch"))
            raise RuntimeError(f"kforge serve answered {status}: {body.get('error', body)}")

    def job(self, job_id: str) -> dict[str, Any]:
        status, _, body = self._request("GET", "/v1/verdicts/" + job_id)
        if status != 200:
            raise KeyError(f"job {job_id}: {body.get('error', status)}")
        return body

    def wait(self, ids: Iterable[str], poll_s: float = 0.2) -> Iterator[dict[str, Any]]:
        """Yields each job once it is done, in the order given."""
        for job_id in ids:
            while True:
                job = self.job(job_id)
                if job["state"] == "done":
                    yield job
                    break
                time.sleep(poll_s)

    def health(self) -> dict[str, Any]:
        return self._request("GET", "/healthz")[2]

    @staticmethod
    def spread(clients: list["KforgeClient"], jobs: list[dict[str, Any]]) -> list[tuple["KforgeClient", str]]:
        """Sends the batch to the servers, each job to the one with the fewest queued jobs."""
        placed: list[tuple[KforgeClient, str]] = []
        queued = [c.health().get("queued", 0) for c in clients]
        for job in jobs:
            i = min(range(len(clients)), key=lambda k: queued[k])
            placed.append((clients[i], clients[i].submit(job)[0]))
            queued[i] += 1
        return placed
