#!/usr/bin/env python3
"""Builds an AgentCore runtime's WebSocket URLs with AWS's bedrock-agentcore SDK, for AgentCoreSDKTests.

AgentCoreRuntimeClient.generate_presigned_url gives the presigned URL and generate_ws_connection
the URL and signed headers, for the given ARN, session id, qualifier and static credentials. The
clock is frozen by patching botocore.auth.get_current_datetime and the client module's datetime,
so the output depends on the arguments alone.

Output: {"presignedURL": ..., "url": ..., "headers": [[name, value], ...]} (generate_ws_connection's
headers without the WebSocket ones, which are random or fixed by the SDK).
"""

import argparse
import datetime
import json
import sys
from unittest import mock

import boto3
import botocore.auth
from bedrock_agentcore.runtime import agent_core_runtime_client
from bedrock_agentcore.runtime.agent_core_runtime_client import AgentCoreRuntimeClient


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arn", required=True)
    parser.add_argument("--session-id", required=True)
    parser.add_argument("--qualifier")
    parser.add_argument("--region", required=True)
    parser.add_argument("--access-key-id", required=True)
    parser.add_argument("--secret-access-key", required=True)
    parser.add_argument("--session-token")
    parser.add_argument("--unix-seconds", type=int, required=True)
    parser.add_argument("--expires", type=int, default=300)
    arguments = parser.parse_args()

    session = boto3.Session(aws_access_key_id=arguments.access_key_id, aws_secret_access_key=arguments.secret_access_key,
                            aws_session_token=arguments.session_token, region_name=arguments.region)
    client = AgentCoreRuntimeClient(region=arguments.region, session=session)

    now = datetime.datetime.fromtimestamp(arguments.unix_seconds, datetime.timezone.utc)

    class FrozenDatetime(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return now if tz else now.replace(tzinfo=None)

    frozen_module = mock.Mock(wraps=datetime)
    frozen_module.datetime = FrozenDatetime
    frozen_module.timezone = datetime.timezone
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=now.replace(tzinfo=None)), \
            mock.patch.object(agent_core_runtime_client, "datetime", frozen_module):
        presigned = client.generate_presigned_url(arguments.arn, session_id=arguments.session_id,
                                                  endpoint_name=arguments.qualifier, expires=arguments.expires)
        url, headers = client.generate_ws_connection(arguments.arn, session_id=arguments.session_id,
                                                     endpoint_name=arguments.qualifier)
    websocket = {"Upgrade", "Connection", "Sec-WebSocket-Version", "Sec-WebSocket-Key", "User-Agent"}
    kept = [[name, value] for name, value in headers.items() if name not in websocket]
    json.dump({"presignedURL": presigned, "url": url, "headers": kept}, sys.stdout)


if __name__ == "__main__":
    main()
