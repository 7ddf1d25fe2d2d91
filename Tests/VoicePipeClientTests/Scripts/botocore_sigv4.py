#!/usr/bin/env python3
"""Signs one GET request with botocore and prints the result as JSON, for SigV4BotocoreTests.

The request is built the way Amazon Bedrock AgentCore's WebSocket samples build it: an
AWSRequest for the https:// form of the wss:// URL, with the Host header set to the given host,
signed by SigV4QueryAuth (--mode presign) or SigV4Auth (--mode header). The clock is fixed by
patching botocore.auth.get_current_datetime, so the output depends on the arguments alone.

Output: {"requestTarget": path?query as sent, "headers": [[name, value], ...] added by signing,
"canonicalRequest": ..., "stringToSign": ...}.
"""

import argparse
import datetime
import json
import sys
from unittest import mock
from urllib.parse import urlsplit

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["presign", "header"], required=True)
    parser.add_argument("--access-key-id", required=True)
    parser.add_argument("--secret-access-key", required=True)
    parser.add_argument("--session-token")
    parser.add_argument("--region", required=True)
    parser.add_argument("--service", required=True)
    parser.add_argument("--unix-seconds", type=int, required=True)
    parser.add_argument("--expires", type=int, default=300)
    parser.add_argument("--host", required=True, help="the Host header's value")
    parser.add_argument("--path", required=True, help="the path as sent, percent-encoded")
    parser.add_argument("--query", default="", help="the raw query string, without '?'")
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                        help="an extra header to sign (repeatable)")
    arguments = parser.parse_args()

    url = f"https://{arguments.host}{arguments.path}"
    if arguments.query:
        url += f"?{arguments.query}"
    headers = {"host": arguments.host}
    for header in arguments.header:
        name, _, value = header.partition(":")
        headers[name] = value
    request = AWSRequest(method="GET", url=url, headers=headers)
    before = set(request.headers.keys())

    credentials = Credentials(arguments.access_key_id, arguments.secret_access_key, arguments.session_token)
    if arguments.mode == "presign":
        signer = botocore.auth.SigV4QueryAuth(credentials, arguments.service, arguments.region, expires=arguments.expires)
    else:
        signer = botocore.auth.SigV4Auth(credentials, arguments.service, arguments.region)

    # Record the intermediate steps as the signer computes them.
    steps = {}
    canonical_request = signer.canonical_request
    string_to_sign = signer.string_to_sign

    def recording_canonical_request(request):
        steps["canonicalRequest"] = canonical_request(request)
        return steps["canonicalRequest"]

    def recording_string_to_sign(request, canonical):
        steps["stringToSign"] = string_to_sign(request, canonical)
        return steps["stringToSign"]

    signer.canonical_request = recording_canonical_request
    signer.string_to_sign = recording_string_to_sign

    now = datetime.datetime.fromtimestamp(arguments.unix_seconds, datetime.timezone.utc).replace(tzinfo=None)
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=now):
        signer.add_auth(request)

    parts = urlsplit(request.url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    added = [[name, value] for name, value in request.headers.items() if name not in before]
    json.dump({"requestTarget": target, "headers": added, **steps}, sys.stdout)


if __name__ == "__main__":
    main()
