"""gunicorn settings for the API (gunicorn -c deploy/gunicorn.conf.py config.wsgi).

Threads per worker overlap database waits; workers spread Python's CPU over the cores. The
figures in docs/operations.md were measured with bench/ingest.py on a 2-core machine.
"""

import multiprocessing
import os

bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_WORKERS", multiprocessing.cpu_count() + 1))
threads = int(os.environ.get("WEB_THREADS", 4))
worker_class = "gthread"
keepalive = 30
timeout = 30
graceful_timeout = 20
max_requests = 20_000  # recycle workers now and then; jitter avoids recycling all at once
max_requests_jitter = 2_000
accesslog = "-"
errorlog = "-"
