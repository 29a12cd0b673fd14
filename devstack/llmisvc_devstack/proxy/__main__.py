"""``python -m llmisvc_devstack.proxy --upstream URL --ca-file F --cert F --key F [--port P]``.

Starts the proxy, prints its URL on one line of stdout (what a parent process waits for) and serves
until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from llmisvc_devstack.proxy.server import IDLE_TIMEOUT, ApiProxy


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m llmisvc_devstack.proxy",
        description="A fault-injecting, counting reverse proxy in front of kube-apiserver.",
    )
    parser.add_argument("--upstream", required=True, help="the API server's https:// URL")
    parser.add_argument("--ca-file", help="the CA bundle that verifies the upstream's certificate")
    parser.add_argument("--cert", help="the proxy's serving certificate (PEM); omit with --key for HTTP")
    parser.add_argument("--key", help="the serving certificate's private key (PEM)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (the default): an ephemeral port")
    parser.add_argument("--fault-seed", type=int, help="seed of the rules' probability draws")
    parser.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    proxy = ApiProxy(
        args.upstream,
        ca_file=args.ca_file,
        certfile=args.cert,
        keyfile=args.key,
        host=args.host,
        port=args.port,
        fault_seed=args.fault_seed,
        idle_timeout=args.idle_timeout,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    proxy.start()
    print(proxy.url, flush=True)
    stop.wait()
    proxy.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
