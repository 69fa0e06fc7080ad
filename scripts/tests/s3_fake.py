"""A small S3 endpoint that says what a test tells it to:
hostile keys, repeated or backward listings, garbage, wrong-length
checksums, 503 SlowDown, SSE-KMS ETags, multipart objects whose part
sizes only HeadObject partNumber gives. Plain HTTP on 127.0.0.1; no
signature is checked (the client's signing is SeaweedFS's to check)."""

import base64
import hashlib
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Obj:
    def __init__(self, data, headers=None, etag=None, parts=None, attrs_parts=True, extra=None):
        self.data = data
        self.headers = headers or {}
        self.extra = extra or []  # (name, value) sent after the others: a header twice
        self.parts = parts  # part sizes of a multipart upload
        self.attrs_parts = attrs_parts
        if etag is None:
            if parts:
                md5s, at = b"", 0
                for p in parts:
                    md5s += hashlib.md5(data[at:at + p]).digest()
                    at += p
                etag = hashlib.md5(md5s).hexdigest() + "-%d" % len(parts)
            else:
                etag = hashlib.md5(data).hexdigest()
        self.etag = etag


class Fake:
    def __init__(self):
        self.objects = {}  # key bytes -> Obj
        self.listing = None  # raw XML pages override: list of bytes
        self.page_size = 1000
        self.fail_first = 0  # answer this many requests 503 SlowDown
        # key bytes -> (chunk bytes, seconds between chunks, bytes after
        # which the body stalls for good, or None): a GET's body trickles.
        self.trickle = {}
        self.trickle_listing = None  # (chunk, pause): listing pages trickle
        # key bytes -> Obj: put in the key's place at its first GET (the
        # object replaced between the listing and the download).
        self.swap_on_get = {}
        # key bytes -> bytes: a GET's body instead of the object's (a
        # server whose body is not the listed length).
        self.body_override = {}
        self.if_match = []  # (key, If-Match header or None) of each GET
        self.requests = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_HEAD(self):
                fake.handle(self, head=True)

            def do_GET(self):
                fake.handle(self, head=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()

    def count(self, method):
        return sum(1 for m, _ in self.requests if m == method)

    def reply(self, h, status, body=b"", headers=None, head=False, extra=()):
        h.send_response(status)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        for k, v in extra:
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if not head:
            h.wfile.write(body)

    def handle(self, h, head):
        url = urllib.parse.urlsplit(h.path)
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        with self.lock:
            self.requests.append(("HEAD" if head else "GET", h.path))
            if self.fail_first > 0:
                self.fail_first -= 1
                body = b"<Error><Code>SlowDown</Code></Error>"
                return self.reply(h, 503, body, head=head)
        parts = url.path.lstrip("/").split("/", 1)
        key = urllib.parse.unquote_to_bytes(parts[1]) if len(parts) > 1 else b""
        if not key and not head and query.get("list-type") == ["2"]:
            return self.list(h, query)
        obj = self.objects.get(key)
        if obj is None:
            return self.reply(h, 404, b"<Error><Code>NoSuchKey</Code></Error>", head=head)
        if "attributes" in query:
            return self.attributes(h, obj)
        headers = {"ETag": '"%s"' % obj.etag}
        headers.update(obj.headers)
        if "partNumber" in query:
            n = int(query["partNumber"][0])
            if not obj.parts or n > len(obj.parts):
                return self.reply(h, 416, b"", head=head)
            at = sum(obj.parts[:n - 1])
            data = obj.data[at:at + obj.parts[n - 1]]
            headers["x-amz-mp-parts-count"] = str(len(obj.parts))
            return self.reply(h, 206, data, headers, head=head)
        if not head and "partNumber" not in query:
            self.if_match.append((key, h.headers.get("If-Match")))
            if key in self.swap_on_get:
                obj = self.objects[key] = self.swap_on_get.pop(key)
                headers = {"ETag": '"%s"' % obj.etag}
                headers.update(obj.headers)
            wanted = h.headers.get("If-Match")
            if wanted is not None and wanted.strip('"') != obj.etag:
                return self.reply(h, 412, b"<Error><Code>PreconditionFailed</Code></Error>")
            if key in self.body_override:
                return self.reply(h, 200, self.body_override[key], headers)
        if not head and key in self.trickle:
            return self.trickled(h, obj, headers, *self.trickle[key])
        self.reply(h, 200, obj.data, headers, head=head, extra=obj.extra)

    def trickled(self, h, obj, headers, chunk, pause, stall_at):
        """The body `chunk` bytes at a time, `pause` seconds apart; from
        `stall_at` bytes on, nothing more (the connection kept open 30 s)."""
        h.send_response(200)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(obj.data)))
        h.end_headers()
        try:
            for at in range(0, len(obj.data), chunk):
                if stall_at is not None and at >= stall_at:
                    time.sleep(30)
                    return
                h.wfile.write(obj.data[at:at + chunk])
                h.wfile.flush()
                time.sleep(pause)
        except OSError:
            pass

    def attributes(self, h, obj):
        body = "<GetObjectAttributesResponse><ETag>%s</ETag>" % obj.etag
        if obj.parts:
            body += "<ObjectParts><TotalPartsCount>%d</TotalPartsCount>" % len(obj.parts)
            if obj.attrs_parts:
                for i, p in enumerate(obj.parts):
                    body += "<Part><PartNumber>%d</PartNumber><Size>%d</Size></Part>" % (i + 1, p)
            body += "<IsTruncated>false</IsTruncated></ObjectParts>"
        body += "</GetObjectAttributesResponse>"
        self.reply(h, 200, body.encode())

    def list(self, h, query):
        if self.listing is not None:
            token = query.get("continuation-token", ["0"])[0]
            page = self.listing[int(token)]
            return self.reply(h, 200, page)
        prefix = query.get("prefix", [""])[0].encode()
        keys = sorted(k for k in self.objects if k.startswith(prefix))
        start = int(query.get("continuation-token", ["0"])[0])
        page = keys[start:start + self.page_size]
        more = start + self.page_size < len(keys)
        body = listing_xml([(k, self.objects[k]) for k in page],
                           str(start + self.page_size) if more else None)
        if self.trickle_listing:
            return self.trickled(h, Obj(body), {}, *self.trickle_listing, None)
        self.reply(h, 200, body)


def listing_xml(objects, token=None):
    out = "<?xml version='1.0'?><ListBucketResult><EncodingType>url</EncodingType>"
    for key, obj in objects:
        out += ("<Contents><Key>%s</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>"
                "<ETag>&quot;%s&quot;</ETag><Size>%d</Size></Contents>"
                % (urllib.parse.quote_from_bytes(key, safe="/"), obj.etag, len(obj.data)))
    if token:
        out += "<IsTruncated>true</IsTruncated><NextContinuationToken>%s</NextContinuationToken>" % token
    else:
        out += "<IsTruncated>false</IsTruncated>"
    return (out + "</ListBucketResult>").encode()


def b64(data):
    return base64.b64encode(data).decode()
