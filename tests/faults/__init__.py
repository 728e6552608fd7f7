"""kill -9 drills (compliance requirement 26): the real gunicorn, real terminals over HTTP, real
processes killed mid-burst, and the books checked from outside afterwards."""
