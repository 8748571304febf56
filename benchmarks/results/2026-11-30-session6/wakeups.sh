#!/bin/bash
# voluntary+involuntary context switches per thread over 10 s, for prefixq workers, redis and the harness
snap() { for p in $(pgrep -f "producer.cli worker|redis-server 127.0.0.1:[0-9]{5}|benchmarks.parity|VLLM::|spawn_main"); do for t in /proc/$p/task/*; do echo "$p $(basename $t) $(cat /proc/$p/comm | tr ' ' _)/$(cat $t/comm | tr ' ' _) $(awk '/^voluntary/{v=$2} /^nonvoluntary/{n=$2} END{print v, n}' $t/status)"; done; done 2>/dev/null; }
snap > /tmp/w0; sleep 10; snap > /tmp/w1
join -j 2 <(sort -k2 /tmp/w0) <(sort -k2 /tmp/w1) | awk '{dv=$8-$4; dn=$9-$5; if (dv+dn>20) print $3, "vol/s=" dv/10, "invol/s=" dn/10}' | sort -t= -k2 -rn | head -30
