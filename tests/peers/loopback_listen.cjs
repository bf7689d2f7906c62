// Preloaded (node --require) into Node servers under test, whose listen() would pick a
// fixed port on every interface: it makes them listen on 127.0.0.1 on a free port
// instead, and announces that port on stderr, so a test can find the server without
// racing for a port or reaching beyond loopback.
"use strict";
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const callback = args.find((arg) => typeof arg === "function");
  this.once("listening", () => {
    process.stderr.write(`mcp_nb test peer listening on port ${this.address().port}\n`);
  });
  return listen.call(this, 0, "127.0.0.1", callback);
};
