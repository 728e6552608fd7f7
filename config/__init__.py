"""Project configuration: settings per environment, URLs, WSGI/ASGI and the Celery app.

This package imports nothing and sets nothing: every entry point is imported after it (gunicorn's
`config.wsgi`, `celery -A config`, which finds `config.celery` itself), so a default set here
would win over the entry point's own. Each entry point picks its default settings module:
`config.wsgi`, `config.asgi` and `config.celery` production, `manage.py` local.
"""
