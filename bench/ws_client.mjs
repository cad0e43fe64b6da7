// A websocket client over a plain TCP socket (RFC 6455, client side), for the lecture bench's
// Node viewers: Node's built-in WebSocket spent ≈ 75 µs of CPU a received frame (an event
// object and a copy into an ArrayBuffer each), on the same two cores as the server it
// measures. This one parses frames out of the socket's chunks and hands the payload over as
// a Buffer view: what it does per message is a few header reads.
//
// The surface lecture_viewers.mjs uses: onopen, onmessage(data: string | Buffer),
// onclose({code}), onerror, send(text), close(), readyState (0 connecting, 1 open, 3 closed).
// It answers the server's pings (uvicorn closes a connection that does not) and its close.

import { randomBytes } from "node:crypto";
import { connect } from "node:net";

const OP = { cont: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 };

export class RawWebSocket {
  constructor(url) {
    const u = new URL(url);
    this.readyState = 0;
    this.onopen = this.onmessage = this.onclose = this.onerror = () => {};
    this._buf = null; // bytes not parsed yet
    this._parts = null; // a fragmented message's pieces
    this._sock = connect({ host: u.hostname, port: Number(u.port), noDelay: true });
    const key = randomBytes(16).toString("base64");
    this._sock.on("connect", () =>
      this._sock.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\n` +
          `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
    this._sock.on("data", (chunk) => this._data(chunk));
    this._sock.on("error", (err) => this.onerror(err));
    this._sock.on("close", () => this._closed(this._code ?? 1006));
  }

  _data(chunk) {
    this._buf = this._buf ? Buffer.concat([this._buf, chunk]) : chunk;
    if (this.readyState === 0) {
      const end = this._buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const status = this._buf.toString("latin1", 0, end).split("\r\n")[0];
      if (!/^HTTP\/1\.1 101/.test(status)) {
        this.onerror(new Error(status));
        this._sock.destroy();
        return;
      }
      this._buf = this._buf.subarray(end + 4);
      this.readyState = 1;
      this.onopen();
    }
    let at = 0;
    const b = this._buf;
    while (b.length - at >= 2) {
      const fin = b[at] & 0x80, op = b[at] & 0x0f;
      let len = b[at + 1] & 0x7f, head = 2;
      if (len === 126) {
        if (b.length - at < 4) break;
        len = b.readUInt16BE(at + 2);
        head = 4;
      } else if (len === 127) {
        if (b.length - at < 10) break;
        len = Number(b.readBigUInt64BE(at + 2));
        head = 10;
      }
      if (b.length - at < head + len) break; // the rest of this frame is still on its way
      this._frame(fin, op, b.subarray(at + head, at + head + len));
      at += head + len;
    }
    this._buf = at === b.length ? null : b.subarray(at);
  }

  _frame(fin, op, payload) {
    if (op === OP.ping) return this._send(OP.pong, payload);
    if (op === OP.pong) return;
    if (op === OP.close) {
      this._code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      if (this.readyState === 1) this._send(OP.close, payload.subarray(0, 2));
      this.readyState = 2;
      this._sock.end();
      return;
    }
    if (op !== OP.cont) this._op = op;
    if (!fin || this._parts) {
      (this._parts ||= []).push(Buffer.from(payload)); // a copy: the chunk is reused
      if (!fin) return;
      payload = Buffer.concat(this._parts);
      this._parts = null;
    }
    this.onmessage({ data: this._op === OP.text ? payload.toString("utf8") : payload });
  }

  _send(op, payload) {
    if (this._sock.destroyed) return;
    const mask = randomBytes(4), n = payload.length;
    const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
    const out = Buffer.alloc(head + 4 + n);
    out[0] = 0x80 | op;
    if (head === 2) out[1] = 0x80 | n;
    else if (head === 4) (out[1] = 0x80 | 126), out.writeUInt16BE(n, 2);
    else (out[1] = 0x80 | 127), out.writeBigUInt64BE(BigInt(n), 2);
    mask.copy(out, head);
    for (let i = 0; i < n; i++) out[head + 4 + i] = payload[i] ^ mask[i & 3]; // clients mask
    this._sock.write(out);
  }

  send(text) {
    if (this.readyState === 1) this._send(OP.text, Buffer.from(text, "utf8"));
  }

  close(code = 1000) {
    if (this.readyState > 1) return;
    const p = Buffer.alloc(2);
    p.writeUInt16BE(code, 0);
    this._send(OP.close, p);
    this.readyState = 2;
    this._code = code;
    setTimeout(() => this._sock.destroy(), 1000).unref(); // the server's close, or not
  }

  _closed(code) {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.onclose({ code });
  }
}
