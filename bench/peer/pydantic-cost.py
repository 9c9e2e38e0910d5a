"""Prints the microseconds pydantic spends on one POST /v1/chat of the peer (bench/peer/run.ts).

FastAPI does this per chat request: validate the body into ChatRequest (its validators
included), build the ChatResponse, and validate it again against the response model from its
dict (FastAPI 0.92 on pydantic 1 does exactly that; newer ones on pydantic 2 much the same). Timed here on the peer's own models, in one process, so the README can say how
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


# pydantic 2's names where it has them (the peer's own runtime), pydantic 1's on Debian.
validate_request = getattr(ChatRequest, "model_validate", None) or ChatRequest.parse_obj
validate_response = getattr(ChatResponse, "model_validate", None) or ChatResponse.parse_obj


def one_request():
    validate_request(body)
    response = ChatResponse(**reply)
    validate_response(response.model_dump() if hasattr(response, "model_dump") else response.dict())


repeats = 20000
seconds = min(timeit.repeat(one_request, number=repeats, repeat=3))
print(f"{seconds / repeats * 1e6:.1f}")
