"""How a Session with a "grpc://host:port" target reaches its master.

    options = wr.distribute.RemoteSessionOptions(
        tls_ca_file="ca.pem", auth_token_file="token", connect_timeout_ms=60000)
    with wr.Session("grpc://ps0:2222", remote=options) as sess:
        ...

The fields are SessionOptions::remote's (src/weir/runtime/session.h), the
client side of a server started with weir-server's --tls-cert/--tls-key and
--auth-token-file (or wr.distribute.Server's options).
"""

__all__ = ["RemoteSessionOptions"]

_DEFAULT_CONNECT_TIMEOUT_MS = 30000


class RemoteSessionOptions:
    """TLS, the bearer token, the message limit and the wait for the master
    of a grpc:// session.

    tls_ca_file: PEM file of the CA(s) that signed the servers' certificates;
      set, the session speaks TLS and verifies the master with it.
    tls_server_name: the name the master's certificate must hold, when it
      does not name the host of the target.
    auth_token_file: a file holding the cluster's bearer token, sent with every
      call (needs TLS). A file, so that the secret is never in a command line.
    max_message_bytes: the largest message sent or accepted; 0: the default
      (2 GiB less one, protobuf's ceiling).
    connect_timeout_ms: how long creating the session waits for a master that
      is not listening yet (a cluster still starting), retrying; then
      UnavailableError naming the address. 0: one try. A master that answers
      but refuses (a TLS mismatch, a missing or wrong token) fails at once.
    """

    __slots__ = ("tls_ca_file", "tls_server_name", "auth_token_file", "max_message_bytes",
                 "connect_timeout_ms")

    def __init__(self, tls_ca_file="", tls_server_name="", auth_token_file="",
                 max_message_bytes=0, connect_timeout_ms=_DEFAULT_CONNECT_TIMEOUT_MS):
        for name, value in (("tls_ca_file", tls_ca_file), ("tls_server_name", tls_server_name),
                            ("auth_token_file", auth_token_file)):
            if not isinstance(value, str):
                raise TypeError("RemoteSessionOptions.%s must be a str, got %s"
                                % (name, type(value).__name__))
        for name, value in (("max_message_bytes", max_message_bytes),
                            ("connect_timeout_ms", connect_timeout_ms)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("RemoteSessionOptions.%s must be an int, got %s"
                                % (name, type(value).__name__))
        self.tls_ca_file = tls_ca_file
        self.tls_server_name = tls_server_name
        self.auth_token_file = auth_token_file
        self.max_message_bytes = max_message_bytes
        self.connect_timeout_ms = connect_timeout_ms

    def _to_c(self):
        """The _C.Session config keys (checked there: ranges, files, TLS)."""
        return {"tls_ca_file": self.tls_ca_file, "tls_server_name": self.tls_server_name,
                "auth_token_file": self.auth_token_file,
                "max_message_bytes": self.max_message_bytes,
                "connect_timeout_ms": self.connect_timeout_ms}

    def __repr__(self):
        return ("RemoteSessionOptions(tls_ca_file=%r, tls_server_name=%r, auth_token_file=%r, "
                "max_message_bytes=%d, connect_timeout_ms=%d)"
                % (self.tls_ca_file, self.tls_server_name, self.auth_token_file,
                   self.max_message_bytes, self.connect_timeout_ms))
