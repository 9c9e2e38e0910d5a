"""Prints the microseconds pydantic 1 spends on one POST /v1/chat of the peer (bench/peer/run.ts).

FastAPI 0.92 on pydantic 1 does this per chat request: validate the body into ChatRequest (its
validators included), build the ChatResponse, and validate it again against the response model
from its dict. Timed here on the peer's own models, in one process, so the README can say how
much of the peer's CPU per request pydantic 2 could save at most. Run from the peer's source
folder with bench/peer/compat on PYTHONPATH. Usage: python3 pydantic-cost.py '<request JSON>'
"""

import json
import sys
import timeit

sys.path.insert(0, ".")  # the peer's source folder, where this runs
from app.api.chat import ChatRequest, ChatResponse

body = json.loads(sys.argv[1])
reply = {"replyText": "嗨！欢迎来到数字人交互系统！", "emotion": "happy", "action": "wave"}


def one_request():
    ChatRequest.parse_obj(body)
    response = ChatResponse(**reply)
    ChatResponse.parse_obj(response.dict())


repeats = 20000
seconds = min(timeit.repeat(one_request, number=repeats, repeat=3))
print(f"{seconds / repeats * 1e6:.1f}")
