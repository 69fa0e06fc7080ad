"""s3_fake.Fake with three more ways to lie, for `contained`'s tests:

- head_status: key -> HTTP status a HeadObject of the whole object gets
  (403: the HEAD failed);
- head_as: key -> Obj whose ETag, headers and length answer HeadObject
  (and GetObjectAttributes) in the listed object's place (the HEAD lies:
  another size or ETag than the listing's);
- no_parts: keys whose part sizes are not to be had: HeadObject
  partNumber is refused 400 (GetObjectAttributes then gives no parts when
  the Obj says attrs_parts=False).
"""

import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3_fake import Fake  # noqa: E402


class Fake2(Fake):
    def __init__(self):
        super().__init__()
        self.head_status = {}
        self.head_as = {}
        self.no_parts = set()

    def reset(self):
        self.objects = {}
        self.listing = None
        self.page_size = 1000
        self.fail_first = 0
        self.trickle = {}
        self.swap_on_get = {}
        self.body_override = {}
        self.head_status = {}
        self.head_as = {}
        self.no_parts = set()
        self.requests.clear()
        self.if_match.clear()

    def handle(self, h, head):
        url = urllib.parse.urlsplit(h.path)
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        parts = url.path.lstrip("/").split("/", 1)
        key = urllib.parse.unquote_to_bytes(parts[1]) if len(parts) > 1 else b""
        whole_head = head and "partNumber" not in query
        if key in self.head_status and whole_head:
            with self.lock:
                self.requests.append(("HEAD", h.path))
            return self.reply(h, self.head_status[key], b"", head=True)
        if key in self.no_parts and "partNumber" in query:
            with self.lock:
                self.requests.append(("HEAD" if head else "GET", h.path))
            return self.reply(h, 400, b"<Error><Code>InvalidArgument</Code></Error>", head=head)
        if key in self.head_as and (whole_head or "attributes" in query):
            obj = self.head_as[key]
            with self.lock:
                self.requests.append(("HEAD" if head else "GET", h.path))
            if "attributes" in query:
                return self.attributes(h, obj)
            headers = {"ETag": '"%s"' % obj.etag}
            headers.update(obj.headers)
            return self.reply(h, 200, obj.data, headers, head=True, extra=obj.extra)
        return Fake.handle(self, h, head)
