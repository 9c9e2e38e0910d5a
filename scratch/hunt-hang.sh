#!/bin/bash
# runs the redis-outage smoke until one does not exit within 40 s, then dumps its stacks
cd /work/main
for i in $(seq 1 20); do
  timeout -s KILL 120 node_modules/.bin/node bench/redis-outage.ts --smoke > /tmp/hunt.out 2>&1 < /dev/null &
  tpid=$!
  sleep 1; pid=$(pgrep -P $tpid node || pgrep -P $tpid)
  for s in $(seq 1 40); do sleep 1; kill -0 $tpid 2>/dev/null || break; done
  if kill -0 $tpid 2>/dev/null; then
    pid=$(pgrep -f "bench/redis-outage.ts --smoke" | grep -v $tpid | head -1)
    echo "hung run $i pid $pid" > /tmp/hunt.result
    top -H -b -n 1 -p $pid | head -30 >> /tmp/hunt.result
    gdb -batch -ex "thread apply all bt 15" -p $pid >> /tmp/hunt.result 2>&1
    cat /proc/$pid/status | grep -E "State|Threads" >> /tmp/hunt.result
    ls -l /proc/$pid/fd >> /tmp/hunt.result 2>&1
    kill -9 $pid
    exit 0
  fi
  echo "run $i ok" >> /tmp/hunt.progress
done
echo "no hang in 30" > /tmp/hunt.result
