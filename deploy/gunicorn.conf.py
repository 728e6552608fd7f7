"""gunicorn settings for the API (gunicorn -c deploy/gunicorn.conf.py config.wsgi).

Sync workers, one per core plus one: a round spends most of its time in Python, and threads in
one process take turns holding the GIL. On the 2-core reference machine bench/ingest.py measured
3 sync workers at about 150 rounds/s with p99 near 130 ms at 32 terminals, against about 125
rounds/s with p99 over 300 ms for 3 workers of 4 threads. Put a buffering proxy (nginx) in front:
a sync worker serves one connection at a time, so it must not wait on slow clients.
"""

import multiprocessing
import os

bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_WORKERS", multiprocessing.cpu_count() + 1))
worker_class = "sync"
timeout = 30
graceful_timeout = 20
max_requests = 20_000  # recycle workers now and then; jitter avoids recycling all at once
max_requests_jitter = 2_000
accesslog = "-"
errorlog = "-"
