"""``llmisvc-router codec-server``: serve Temporal's ``/encode`` and ``/decode`` endpoints with the keys
of ``LLMISVC_ROUTER_CODEC_KEYS_FILE``, so the Temporal UI can show encrypted payloads
(``llmisvc_runtime.codec_server``)."""

from __future__ import annotations

import argparse
import sys

from llmisvc_runtime import codec, codec_server, exit_codes

DEFAULT_PORT = 8081
DESCRIPTION = f"""\
Serve Temporal's codec endpoints (POST /encode, POST /decode) with the payload encryption keys of
{codec.KEYS_FILE_VARIABLE}, so the Temporal UI and `temporal workflow show --codec-endpoint` can show
the payloads the worker, the watcher and the commands encrypted. In the UI, set "Codec Server" (the
data encoder settings) to this server's address. Whoever reaches it can decrypt: it listens on
127.0.0.1 unless --host says otherwise; put it behind the same access control as the UI.

examples:
  {codec.KEYS_FILE_VARIABLE}=/etc/llmisvc-router/codec/keys.json llmisvc-router codec-server
  llmisvc-router codec-server --keys-file keys.json --port 8081 --cors-origin https://temporal.example
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "codec-server",
        help="decrypt payloads for the Temporal UI (a codec server)",
        description=DESCRIPTION,
        epilog=exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--keys-file", help=f"the keys file (default: ${codec.KEYS_FILE_VARIABLE})")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default: {DEFAULT_PORT}")
    parser.add_argument(
        "--cors-origin",
        action="append",
        metavar="ORIGIN",
        help="an origin of the Temporal UI allowed to call (repeatable; '*' for any; default: "
        + ", ".join(codec_server.DEFAULT_ORIGINS)
        + ")",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    env = {codec.KEYS_FILE_VARIABLE: args.keys_file} if args.keys_file else None
    try:
        found = codec.codec_from_env(env)
    except codec.CodecKeysError as err:
        print(f"llmisvc-router codec-server: {err}", file=sys.stderr)
        return exit_codes.USAGE
    if found is None:
        print(
            f"llmisvc-router codec-server: no keys: set {codec.KEYS_FILE_VARIABLE} or pass --keys-file",
            file=sys.stderr,
        )
        return exit_codes.USAGE
    origins = args.cors_origin or list(codec_server.DEFAULT_ORIGINS)
    try:
        server = codec_server.bind(found, args.host, args.port, origins)
    except OSError as err:
        print(
            f"llmisvc-router codec-server: cannot listen on {args.host}:{args.port}: {err.strerror}",
            file=sys.stderr,
        )
        return exit_codes.UNAVAILABLE
    print(
        f"codec server at http://{args.host}:{server.server_address[1]} (CORS: {', '.join(origins)})",
        flush=True,
    )
    with server:
        server.serve_forever()
    return exit_codes.OK
