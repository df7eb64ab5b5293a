#!/usr/bin/env python3
"""A real OTLP/HTTP logs receiver for the tests: decodes each POST to /v1/logs
with the opentelemetry-proto package and appends what it found as one JSON
line to OUT. The test reads PORT from PORT_FILE once the server listens.

usage: otlp_receiver.py PORT_FILE OUT [--fail-first N] [--status CODE]
  --fail-first N  answer the first N posts with 500 (exercises retries)
"""
import json
import time
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def main():
    port_file, out = sys.argv[1], sys.argv[2]
    fail_first = int(sys.argv[sys.argv.index("--fail-first") + 1]) if "--fail-first" in sys.argv else 0
    state = {"posts": 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            state["posts"] += 1
            if state["posts"] <= fail_first:
                self.send_response(500)
                self.end_headers()
                with open(out, "a") as f:
                    f.write(json.dumps({"refused": state["posts"], "receivedAt": time.monotonic()}) + "\n")
                return
            request = logs_service_pb2.ExportLogsServiceRequest()
            request.ParseFromString(body)  # raises on a malformed body: the test then sees no record
            records = []
            for rl in request.resource_logs:
                resource = {kv.key: value(kv.value) for kv in rl.resource.attributes}
                for sl in rl.scope_logs:
                    for r in sl.log_records:
                        records.append({
                            "path": self.path,
                            "contentType": self.headers.get("Content-Type"),
                            "scope": sl.scope.name,
                            "resource": resource,
                            "timeUnixNano": r.time_unix_nano,
                            "observedTimeUnixNano": r.observed_time_unix_nano,
                            "severity": r.severity_number,
                            "eventName": r.event_name,
                            "body": value(r.body),
                            "attributes": {kv.key: value(kv.value) for kv in r.attributes},
                            "receivedAt": time.monotonic(),
                        })
            with open(out, "a") as f:
                for record in records:
                    f.write(json.dumps(record) + "\n")
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = HTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
