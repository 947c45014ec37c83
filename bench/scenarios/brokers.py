"""Brokers: the drain of N pre-loaded deliveries to each real broker Debian packages,
beside the HTTP drain of the same N in the same run (docs/brokers.md)."""

import json
import os
import shutil
import signal
import socket
import tempfile
import time

from harness.cpu import TICK_US, machine_ticks, process_ticks, tree_ticks
from harness.drain import drain, preload, timed_run
from harness.figures import Part
from harness.log import die, log
from harness.processes import free_port
from harness.stats import ratio

HELP = """\
  broker_<t>_per_s        N/2 due deliveries pre-loaded with SQL over three destinations of
                          the broker t (a connection each), `webhookd worker` timed until
                          all succeeded, attempts == N/2 checked. t: redis (redis-server,
                          three databases of one server), amqp (rabbitmq-server, the vhost
                          "/" spelled three ways, a durable classic queue of version 2
                          for each destination, on the default exchange), nats (three
                          nats-server -js, a stream each). A broker not installed is left
                          out with a note; Kafka is not packaged in Debian and is left
                          out. The details give each drain's CPU µs a message: webhookd's
                          and the broker's (the sink's for HTTP), and the machine's busy
                          cores
  broker_<t>_vs_http      its ratio to the HTTP drain of the same N/2 (three destinations
                          at the sink) run just before it (target >= 0.8)
"""

ONLY = """\
--only brokers runs the sink's HTTP drain and each broker's drain beside it."""

FIGURES = ["broker_redis_per_s", "broker_redis_vs_http", "broker_amqp_per_s",
           "broker_amqp_vs_http", "broker_nats_per_s", "broker_nats_vs_http"]
DETAILS = ["brokers"]


def wait_port(port: int, name: str, seconds: float = 30) -> None:
    """Waits until 127.0.0.1:PORT takes a connection."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    die(f"{name} is not listening on {port} after {seconds} s")


def start_redis(b):
    """redis-server on a free loopback port, without persistence; (process, urls)."""
    port = free_port()
    proc = b.procs.start("redis", ["redis-server", "--port", port, "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no"])
    wait_port(port, "redis-server")
    urls = [f"redis://127.0.0.1:{port}/{db}" for db in (1, 2, 3)]
    return proc, urls, ['{"stream": "webhooks", "max_len": 100000}'] * 3


def start_rabbitmq(b):
    """A RabbitMQ node on free loopback ports in a directory of its own, with a durable
    queue per destination, "webhooks-1" to "-3", declared at boot (one queue is one Erlang
    process, as one HTTP endpoint is not one thread); (process, urls, settings). The node runs in a
    session of its own with its own epmd, so that stopping it leaves nothing behind."""
    work = tempfile.mkdtemp(prefix="bench-rabbitmq-")
    port, dist, epmd = free_port(), free_port(), free_port()
    with open(os.path.join(work, "definitions.json"), "w") as f:
        # Definitions imported at boot replace the default user: guest is defined here.
        json.dump({"users": [{"name": "guest", "password": "guest", "tags": "administrator"}],
                   "permissions": [{"user": "guest", "vhost": "/", "configure": ".*",
                                    "write": ".*", "read": ".*"}],
                   "vhosts": [{"name": "/"}], "queues": [
            {"name": f"webhooks-{i}", "vhost": "/", "durable": True, "auto_delete": False,
             "arguments": {"x-queue-version": 2}} for i in (1, 2, 3)]}, f)
    with open(os.path.join(work, "rabbitmq.conf"), "w") as f:
        f.write(f"listeners.tcp.default = 127.0.0.1:{port}\n"
                "disk_free_limit.absolute = 1MB\n"
                "loopback_users = none\n"
                "definitions.import_backend = local_filesystem\n"
                f"definitions.local.path = {work}/definitions.json\n")
    with open(os.path.join(work, "enabled_plugins"), "w") as f:
        f.write("[].\n")
    b.procs.start("epmd", ["/usr/bin/epmd", "-port", epmd, "-address", "127.0.0.1"])
    env = {**os.environ, "HOME": work, "ERL_EPMD_PORT": str(epmd),
           "RABBITMQ_NODENAME": f"rabbit-{port}@localhost",
           "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1", "RABBITMQ_NODE_PORT": str(port),
           "RABBITMQ_DIST_PORT": str(dist),
           "RABBITMQ_CONFIG_FILE": f"{work}/rabbitmq.conf",
           "RABBITMQ_ENABLED_PLUGINS_FILE": f"{work}/enabled_plugins",
           "RABBITMQ_MNESIA_BASE": f"{work}/mnesia", "RABBITMQ_LOG_BASE": f"{work}/log",
           "RABBITMQ_PID_FILE": f"{work}/rabbitmq.pid",
           "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS":
               "-start_epmd false -kernel inet_dist_use_interface {127,0,0,1}"}
    proc = b.procs.start("rabbitmq", ["/usr/bin/setsid", "/usr/lib/rabbitmq/bin/rabbitmq-server"],
                         env=env)
    wait_port(port, "rabbitmq-server", 90)
    time.sleep(2)  # the listener opens before the definitions are in
    # Three connections: the vhost "/" spelled three ways.
    urls = [f"amqp://127.0.0.1:{port}/{v}" for v in ("", "%2F", "%2f")]
    return proc, urls, [f'{{"routing_key": "webhooks-{i}"}}' for i in (1, 2, 3)]


def nats_request(port: int, subject: str, payload: dict) -> str:
    """One request over NATS's text protocol: the answer's payload."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        f = s.makefile("rb")
        f.readline()  # INFO
        body = json.dumps(payload).encode()
        s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB _INBOX.bench 1\r\n'
                  + f"PUB {subject} _INBOX.bench {len(body)}\r\n".encode() + body + b"\r\n")
        while True:
            line = f.readline().decode()
            if line.startswith("MSG"):
                return f.read(int(line.split()[-1]) + 2).decode().strip()
            if line.startswith("PING"):
                s.sendall(b"PONG\r\n")
            elif not line:
                return ""


def start_nats(b):
    """Three nats-servers with JetStream on free loopback ports (a connection each), each
    with a stream over webhooks.>; (processes, urls, settings)."""
    procs, urls = [], []
    for i in range(3):
        port = free_port()
        store = tempfile.mkdtemp(prefix="bench-nats-")
        procs.append(b.procs.start(f"nats-{i}", ["nats-server", "-js", "-a", "127.0.0.1", "-p",
                                                 port, "-sd", store]))
        wait_port(port, "nats-server")
        answer = nats_request(port, "$JS.API.STREAM.CREATE.WEBHOOKS",
                              {"name": "WEBHOOKS", "subjects": ["webhooks.>"],
                               "storage": "file"})
        if '"error"' in answer or not answer:
            die(f"nats-server: the stream was not made: {answer}")
        urls.append(f"nats://127.0.0.1:{port}")
    return procs, urls, ["{}"] * 3


BROKERS = {"redis": ("redis-server", start_redis), "amqp": ("rabbitmq-server", start_rabbitmq),
           "nats": ("nats-server", start_nats)}


def broker_drain(b, name: str, n: int, urls, settings) -> tuple:
    """N deliveries to three destinations at URLS with SETTINGS, drained by `webhookd worker` on a fresh
    database; the rate, checked (every delivery succeeded with one attempt), and the
    worker's CPU ticks."""
    db = b.new_db(f"bench_{name}")
    db.sql("preload_broker", n=n, url1=urls[0], url2=urls[1], url3=urls[2],
           broker1=settings[0], broker2=settings[1], broker3=settings[2], secret=b.secret)
    cap_s = min(n // 500 + 60, 600)
    counts = [n, 0]  # unfinished, attempts: the last look

    def finished() -> bool:
        counts[:] = map(int, db.sql("all_unfinished").split())
        return counts[0] == 0

    run = timed_run(b, name, [b.webhookd, "worker"], b.wh_env(db), cap_s, finished)
    seconds = run.seconds
    unfinished, attempts = counts
    db.drop()
    if unfinished:
        b.invalidate(f"{name}: {unfinished} of {n} deliveries unfinished after {cap_s} s",
                     f"broker_{name}_per_s", f"broker_{name}_vs_http")
    elif attempts != n:
        b.invalidate(f"{name}: {attempts} attempts recorded for {n} deliveries",
                     f"broker_{name}_per_s", f"broker_{name}_vs_http")
    rate = f"{(n - unfinished) / seconds:.0f}"
    log(f"{name}: {n} deliveries in {int(seconds * 1000)} ms: {rate}/s, attempts {attempts}")
    return rate, run.ticks


def measure(b) -> Part:
    n = max(b.cfg.deliveries // 2, 1000)
    part = Part()
    lines = []
    for name, (program, start) in BROKERS.items():
        if shutil.which(program) is None:
            lines.append(f"{name}: {program} is not installed, left out")
            continue
        log(f"brokers: {n} deliveries over HTTP to the sink, then the same to {name}")
        db = b.new_db("bench_broker_http")
        preload(b, db, n)
        sink_before = process_ticks(b.sink_pid)
        http = drain(b, f"http-before-{name}", "worker", n, db)
        sink_us = (process_ticks(b.sink_pid) - sink_before) * TICK_US / n
        db.drop()
        procs, urls, settings = start(b)
        procs = procs if isinstance(procs, list) else [procs]
        broker_before, machine_before = sum(tree_ticks(p.pid) for p in procs), machine_ticks()
        t0 = time.monotonic()
        rate, ticks = broker_drain(b, name, n, urls, settings)
        busy = (machine_ticks() - machine_before) * TICK_US / 1e6 / (time.monotonic() - t0)
        broker_us = (sum(tree_ticks(p.pid) for p in procs) - broker_before) * TICK_US / n
        for proc in procs:
            b.procs.stop(proc)
            try:  # RabbitMQ's node runs in a session of its own: all of it goes
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        part.add(f"broker_{name}_per_s", rate, "")
        if not http.valid:  # its own note says why; a ratio to a failed drain is none
            b.invalidate(f"{name}: the HTTP drain it is compared with failed its check",
                         f"broker_{name}_vs_http")
        part.add(f"broker_{name}_vs_http", ratio(rate, http.rate), ">= 0.8")
        lines.append(f"{name}: {rate}/s beside HTTP {http.rate}/s; CPU µs a message: webhookd"
                     f" {ticks * TICK_US / n:.0f} (over HTTP {http.ticks * TICK_US / n:.0f}),"
                     f" the broker {broker_us:.0f} (the sink {sink_us:.0f}); the machine's"
                     f" cores busy {busy:.2f} of {os.cpu_count()}")
    part.details["brokers"] = f"brokers        {n} deliveries each; " + "; ".join(lines)
    return part


def alone(b) -> Part:
    return measure(b)
