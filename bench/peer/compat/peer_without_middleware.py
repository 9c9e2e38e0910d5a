"""The peer's app with its four BaseHTTPMiddleware layers taken off: a profile aid, not the peer.

bench/peer/run.ts measures it beside the peer as run (`uvicorn peer_without_middleware:app`)
to bound what Debian's old Starlette and anyio cost it: on Starlette 0.26 with anyio 3.6 each
BaseHTTPMiddleware layer runs the request in task groups whose cancellation re-schedules itself
on every turn of the event loop. With the benchmark's settings the four layers do no work of
their own (auth off, rate limit off, no errors) besides one log line per request. CORS stays.
"""

from app.main import app

app.user_middleware = [entry for entry in app.user_middleware if entry.cls.__name__ == "CORSMiddleware"]
app.middleware_stack = None  # rebuilt from user_middleware on the first request
