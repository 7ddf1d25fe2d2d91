#!/usr/bin/env python3
"""Prints the credentials botocore resolves for this environment, as JSON, for AWSCredentialProcessTests.

The files and profile come from the environment (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE,
AWS_PROFILE, ...), exactly as VoicePipe reads them; the instance metadata service is turned off
so nothing waits on the network. Output: {"accessKeyId", "secretAccessKey", "sessionToken",
"method"} or {"error": the exception's class name}.
"""

import json
import os
import sys

import botocore.exceptions
import botocore.session


def main():
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    try:
        credentials = botocore.session.Session().get_credentials()
    except botocore.exceptions.BotoCoreError as error:
        json.dump({"error": type(error).__name__}, sys.stdout)
        return
    if credentials is None:
        json.dump({"error": "NoCredentials"}, sys.stdout)
        return
    frozen = credentials.get_frozen_credentials()
    json.dump({"accessKeyId": frozen.access_key, "secretAccessKey": frozen.secret_key,
               "sessionToken": frozen.token, "method": credentials.method}, sys.stdout)


if __name__ == "__main__":
    main()
