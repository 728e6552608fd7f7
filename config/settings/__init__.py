"""Settings per environment: base (shared), local (make run), test (make test), production."""
