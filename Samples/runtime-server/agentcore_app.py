#!/usr/bin/env python3
"""The runtime server's voice rules as an AgentCore container: AWS's BedrockAgentCoreApp serving
the WebSocket on /ws (port 8080 by default, as AgentCore containers do), for end-to-end tests of
`voicepipe session --agentcore-runtime ... --endpoint-url http://127.0.0.1:PORT`.

In front of the app sits a stand-in for the AgentCore data plane, which on AWS takes
/runtimes/<ARN>/ws, checks the signature and hands the container /ws with the session id in the
X-Amzn-Bedrock-AgentCore-Runtime-Session-Id header: here it maps the path and moves a presigned
URL's session id into that header (it does not check SigV4; server.py --require-sigv4 does).

Prints JSON lines as server.py does: "listening" (url), "connection" (path, the session id the
app's context saw), "session" (session.start's sessionId) and "closed".
"""

import argparse
import asyncio
import os
import socket
import sys
from urllib.parse import parse_qsl, unquote, urlencode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import uvicorn  # noqa: E402
from bedrock_agentcore.runtime import BedrockAgentCoreApp  # noqa: E402
from bedrock_agentcore.runtime.models import SESSION_HEADER  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from server import Action, SessionReads, VoiceRuntime, WireError, emit, encode_message, now_ns, read_client_message  # noqa: E402

app = BedrockAgentCoreApp()
# What was read of each session over its connections, for session.resumed (as server.py does).
reads = SessionReads()


@app.websocket
async def voice(websocket, context):
    """Runs server.py's voice rules (unpaced) over the app's WebSocket until the session ends."""
    await websocket.accept()
    emit("connection", path=websocket.scope["path"], sessionId=context.session_id)
    runtime = VoiceRuntime(paced=False)
    session_id = None
    try:
        while not runtime.finished:
            action = runtime.next_action(now_ns())
            if action is not None:
                if action.kind == "close":
                    await websocket.close(1000)
                    break
                await websocket.send_text(encode_message(action.message))
                continue
            text = await websocket.receive_text()
            try:
                message = read_client_message(text)
            except WireError as error:
                runtime.receive(error, now_ns())
                continue
            if message.type == "session.start" and session_id is None:
                emit("session", sessionId=message.fields["sessionId"], contextSessionId=context.session_id)
                session_id = message.fields["sessionId"]
                resumed = reads.start(message.fields)
                if resumed is not None:
                    runtime.urgent.append(Action("send", resumed))
            elif session_id is not None:
                reads.read(session_id, message.type)
            runtime.receive(message, now_ns())
    except WebSocketDisconnect:
        runtime.closed()
    emit("closed", sessionId=context.session_id)


def data_plane(inner):
    """An ASGI app that serves /runtimes/<ARN>/ws as the container's /ws, as AgentCore does."""
    async def front(scope, receive, send):
        if scope["type"] == "websocket":
            path = scope["path"]
            if path.startswith("/runtimes/") and path.endswith("/ws"):
                query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
                headers = [(name, value) for name, value in scope["headers"] if name.decode("latin-1").lower() != SESSION_HEADER.lower()]
                session = [value for name, value in query if name == SESSION_HEADER]
                given = [value for name, value in scope["headers"] if name.decode("latin-1").lower() == SESSION_HEADER.lower()]
                for value in session:
                    headers.append((SESSION_HEADER.lower().encode(), value.encode()))
                if not session:
                    headers += [(SESSION_HEADER.lower().encode(), value) for value in given]
                kept = [(name, value) for name, value in query if name != SESSION_HEADER and not name.startswith("X-Amz-")]
                emit("dataPlane", path=unquote(path), query=urlencode(kept))
                scope = dict(scope, path="/ws", raw_path=b"/ws", headers=headers, query_string=urlencode(kept).encode())
        await inner(scope, receive, send)
    return front


def main(arguments):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (0: any free one; default 8080)")
    options = parser.parse_args(arguments)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", options.port))
    emit("listening", url=f"ws://127.0.0.1:{listener.getsockname()[1]}")
    server = uvicorn.Server(uvicorn.Config(data_plane(app), log_level="warning", ws="websockets-sansio"))
    asyncio.run(server.serve(sockets=[listener]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
