#!/usr/bin/env python3
"""Checks the static documentation site `make docs` writes, in a real browser, as a reader would use it.

    python3 tools/docs/check-site.py SITE [--base-path PATH]

SITE is the folder `make docs` wrote (.build/docs), built for the hosting base path PATH (default:
none, the site at the server's root). The check serves it with `python3 -m http.server` on a free
loopback port (under /PATH/ when there is one), starts headless Chromium (Debian's `chromium`) and
drives it over the DevTools protocol (a WebSocket; this file holds the small client it needs, the
standard library has none):

1. it opens the CipherDB overview and waits until DocC's JavaScript has rendered it (the page
   itself is an empty shell): the title, the abstract and the topic links must be on the page;
2. it clicks the overview's link into the CipherKeystore module and checks the page the browser
   then renders, by its title and abstract (the link between two modules' documentation);
3. it clicks, there, a symbol link back into CipherDB (DocC resolves those at build time);
4. it loads a CipherKeystore article by its address, as a bookmark or a link from elsewhere would;
5. it opens the overview from the file system (file://) and reports whether it renders: DocC's
   pages load their scripts from the site's root (/js/...) and their content with fetch(), neither
   of which works from file://, so this is expected to show nothing, and is reported, not failed.

Exit status 0 when 1 to 4 pass, 1 when one fails (what was on the page is printed), 69 when Chromium
cannot be started.
"""

import base64
import functools
import http.server
import json
import os
import shutil
import socket
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

TIMEOUT = 60  # seconds for a page to render (a cold Chromium on 2 cores takes a few)

# What each page must show once rendered: its title (DocC's h1) and a phrase of its abstract, from
# the catalogs under Sources/*/Documentation.docc.
CIPHERDB_OVERVIEW = ("CipherDB", "An FMDB-style database API over SQLCipher")
CIPHERKEYSTORE_OVERVIEW = ("CipherKeystore", "A sealed file of database keys")
CIPHERKEYSTORE_ARTICLE = ("keysandthekeystore", "Keys and the keystore", "Keep database keys in a keystore file")
# The CipherDB symbol the CipherKeystore overview links to (``/CipherDB/DatabaseQueue``).
CIPHERDB_SYMBOL = ("databasequeue", "DatabaseQueue", "One connection shared safely between threads")


class WebSocket:
    """The client side of RFC 6455, as much as the DevTools protocol needs: text frames, masked."""

    def __init__(self, url):
        assert url.startswith("ws://")
        host_port, _, path = url[len("ws://") :].partition("/")
        host, _, port = host_port.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("the DevTools endpoint closed the connection")
            response += chunk
        head, _, self.buffer = response.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(f"no WebSocket upgrade: {head.decode(errors='replace')}")

    def send(self, text):
        payload = text.encode()
        header = bytes([0x81])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _read(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the DevTools endpoint closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def receive(self):
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            if second & 0x80:
                mask = self._read(4)
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(self._read(length)))
            else:
                data = self._read(length)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise ConnectionError("the DevTools endpoint closed the WebSocket")
            if opcode in (0x9, 0xA):  # ping, pong: not used by Chromium here
                continue
            message += data
            if first & 0x80:
                return message.decode()


class Browser:
    """Headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="cipherdb-docs-chromium-")
        executable = shutil.which("chromium") or shutil.which("chromium-browser")
        if executable is None:
            raise FileNotFoundError("chromium is not installed (tools/install-deps.sh docs-check installs it)")
        self.process = subprocess.Popen(
            [
                executable,
                "--headless=new",
                "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = None
        deadline = time.time() + TIMEOUT
        while port is None and time.time() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            if line.startswith("DevTools listening on ws://"):
                port = int(line.split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        if port is None:
            self.close()
            raise RuntimeError("Chromium did not start its DevTools endpoint")
        # Chromium goes on writing to stderr (D-Bus complaints): drain it so it never blocks.
        threading.Thread(target=lambda: self.process.stderr.read(), daemon=True).start()
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=TIMEOUT))
        page = next(target for target in targets if target["type"] == "page")
        self.socket = WebSocket(page["webSocketDebuggerUrl"])
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.receive())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def navigate(self, url):
        self.call("Page.navigate", url=url)

    def rendered(self):
        """The page as rendered now: its address, DocC's title and the main content's text."""
        return self.evaluate(
            "({path: location.pathname, title: (document.querySelector('main h1') || {}).innerText || '',"
            " text: (document.querySelector('main') || {}).innerText || ''})"
        )

    def wait_for(self, title, phrase, path_start=None):
        """Waits until the page shows `title` as its heading and `phrase` in its content."""
        deadline = time.time() + TIMEOUT
        page = {}
        while time.time() < deadline:
            page = self.rendered()
            if (
                page["title"].strip() == title
                and phrase in page["text"]
                and (path_start is None or page["path"].startswith(path_start))
            ):
                return page
            time.sleep(0.25)
        raise AssertionError(f"expected a page titled {title!r} showing {phrase!r}, at {path_start}; the browser shows {page}")

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    """`python3 -m http.server` on a free loopback port, in a thread: (server, port)."""
    handler = functools.partial(QuietHandler, directory=root)
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def click_link(browser, path_start, text=None):
    """Clicks the first link on the page whose address starts with `path_start` (and whose text
    contains `text`), as a reader would; returns its address."""
    script = f"""(() => {{
        const links = Array.from(document.querySelectorAll('main a[href]'));
        const link = links.find(a => new URL(a.href).pathname.startsWith({json.dumps(path_start)})
            && ({json.dumps(text)} === null || a.innerText.includes({json.dumps(text)})));
        if (!link) return null;
        link.scrollIntoView();
        link.click();
        return new URL(link.href).pathname;
    }})()"""
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        clicked = browser.evaluate(script)
        if clicked:
            return clicked
        time.sleep(0.25)
    links = browser.evaluate("Array.from(document.querySelectorAll('main a[href]')).map(a => new URL(a.href).pathname)")
    raise AssertionError(f"no link to {path_start}* on {browser.rendered()['path']}; its links: {links}")


def main(arguments):
    if not arguments or arguments[0].startswith("-") or len(arguments) not in (1, 3) or (len(arguments) == 3 and arguments[1] != "--base-path"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 64
    site = os.path.abspath(arguments[0])
    base = "/" + arguments[2].strip("/") + "/" if len(arguments) == 3 and arguments[2].strip("/") else "/"
    if not os.path.isfile(os.path.join(site, "documentation", "cipherdb", "index.html")):
        print(f"check-site: {site} holds no static DocC site (run make docs)", file=sys.stderr)
        return 66
    root = site
    scratch = None
    if base != "/":
        # Served under /PATH/, as a project site is.
        scratch = tempfile.mkdtemp(prefix="cipherdb-docs-root-")
        os.makedirs(os.path.dirname(os.path.join(scratch, base.strip("/"))), exist_ok=True)
        os.symlink(site, os.path.join(scratch, base.strip("/")))
        root = scratch
    server, port = serve(root)
    origin = f"http://127.0.0.1:{port}"
    try:
        browser = Browser()
    except (OSError, RuntimeError) as error:
        print(f"check-site: {error}", file=sys.stderr)
        server.shutdown()
        return 69
    try:
        overview = f"{origin}{base}documentation/cipherdb"
        print(f"check-site: {overview}")
        browser.navigate(overview)
        browser.wait_for(*CIPHERDB_OVERVIEW, path_start=f"{base}documentation/cipherdb")
        print("  rendered: the CipherDB overview")

        target = click_link(browser, f"{base}documentation/cipherkeystore")
        page = browser.wait_for(*CIPHERKEYSTORE_OVERVIEW, path_start=f"{base}documentation/cipherkeystore")
        print(f"  followed its link to {target}: rendered {page['title']!r}")

        back = click_link(browser, f"{base}documentation/cipherdb/{CIPHERDB_SYMBOL[0]}")
        page = browser.wait_for(*CIPHERDB_SYMBOL[1:], path_start=back.rstrip("/"))
        print(f"  followed its symbol link back to {back}: rendered {page['title']!r}")

        article = f"{origin}{base}documentation/cipherkeystore/{CIPHERKEYSTORE_ARTICLE[0]}"
        browser.navigate(article)
        browser.wait_for(*CIPHERKEYSTORE_ARTICLE[1:], path_start=f"{base}documentation/cipherkeystore/")
        print(f"  loaded {article}: rendered {CIPHERKEYSTORE_ARTICLE[1]!r}")

        file_url = "file://" + os.path.join(site, "documentation", "cipherdb", "index.html")
        browser.navigate(file_url)
        time.sleep(3)
        shown = browser.rendered()
        verdict = "renders" if CIPHERDB_OVERVIEW[1] in shown["text"] else "does not render (DocC's pages load their scripts from the site's root and fetch their content)"
        print(f"  {file_url}: {verdict}")
        print("check-site: passed")
        return 0
    except AssertionError as failure:
        print(f"check-site: FAILED: {failure}", file=sys.stderr)
        return 1
    finally:
        browser.close()
        server.shutdown()
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
