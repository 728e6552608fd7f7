"""What guards the whole service: its secret key, the host names it answers to, and whether a
terminal must show the client certificate of its table.

Invariants: the development key below is public, so production refuses it
(config.settings.production reads DEVELOPMENT_SECRET_KEY from here); ALLOWED_HOSTS defaults to
this host's loopback names only.
"""

from config.settings.env import env_bool, env_list, env_str

# Production refuses this key (config.settings.production): it is public.
DEVELOPMENT_SECRET_KEY = "insecure-development-key-never-used-in-production"
SECRET_KEY = env_str("SECRET_KEY", DEVELOPMENT_SECRET_KEY)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])

# Mutual TLS for terminals (compliance requirement 39; docs/operations.md "Terminals' client
# certificates"): when on, the proxy in front ends each terminal's TLS with a client certificate
# it verified against the club's CA and says so in two headers it always sets itself
# (X-Client-Verify: its verification, SUCCESS or why not; X-Client-Subject: the certificate's
# subject, RFC 2253), and a terminal's request is refused unless the subject's CN names the
# table of its token (`table-<id>`).
TERMINAL_CLIENT_CERTIFICATES = env_bool("TERMINAL_CLIENT_CERTIFICATES", default=False)
