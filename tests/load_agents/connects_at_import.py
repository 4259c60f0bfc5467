"""A module that calls its provider at import (a warm-up request): prunecheck
refuses the connection before anything leaves the machine."""

import socket

socket.create_connection(("api.openai.com", 443), timeout=5)
